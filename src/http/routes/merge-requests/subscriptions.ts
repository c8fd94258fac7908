import { subscriptionRoutes } from '../issuables/subscriptions.js';
import { MERGE_REQUEST_KIND } from './find.js';

/** API::Subscriptions and the participants endpoint for merge requests (one implementation with issues'). */
export const mergeRequestSubscriptionRoutes = subscriptionRoutes(MERGE_REQUEST_KIND);
