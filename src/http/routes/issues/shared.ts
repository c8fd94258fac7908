import { Hono } from 'hono';
import type { AppEnv } from '../../kernel/context.js';
import { subscriptionRoutes } from '../issuables/subscriptions.js';
import { timeTrackingRoutes } from '../issuables/time-tracking.js';
import { todoRoutes } from '../issuables/todo.js';
import { ISSUE_KIND } from './find.js';

/** The endpoints issues share with merge requests: time tracking, subscriptions, participants, todo. */
export const issueSharedRoutes = new Hono<AppEnv>().route('/', timeTrackingRoutes(ISSUE_KIND)).route('/', subscriptionRoutes(ISSUE_KIND)).route('/', todoRoutes(ISSUE_KIND));
