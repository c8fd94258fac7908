import type { EventsOf } from './aggregate.js';
import { broadcastMessages } from './broadcast-messages.js';
import { deployKeys } from './deploy-keys.js';
import { environments } from './environments.js';
import { epics } from './epics.js';
import { geoNodes } from './geo-nodes.js';
import { labels } from './labels.js';
import { members } from './members.js';
import { milestones } from './milestones.js';
import { notificationSettings } from './notification-settings.js';
import { protectedBranches } from './protected-branches.js';
import { protectedTags } from './protected-tags.js';
import { scim } from './scim.js';
import { snippets } from './snippets.js';
import { todos } from './todos.js';
import { applicationSettings } from './application-settings/aggregate.js';
import { containerRepositories } from './container-repositories/aggregate.js';
import { featureFlags } from './feature-flags/aggregate.js';
import { groups } from './groups/aggregate.js';
import { integrations } from './integrations/aggregate.js';
import { hooks } from './hooks/aggregate.js';
import { mergeRequests } from './merge-requests/aggregate.js';
import { issues } from './issues/aggregate.js';
import { projects } from './projects/aggregate.js';
import { repository } from './repository/aggregate.js';
import { users } from './users/aggregate.js';
import { notes } from './notes/aggregate.js';
import { awardEmoji } from './award-emoji/aggregate.js';
import { boards } from './boards.js';
import { issueLinks } from './issue-links.js';
import { userSshKeys } from './user-ssh-keys.js';

/**
 * Every aggregate, in the order their projections apply an event: the one list the kernel
 * derives the rest from — the union of every event (KnownEvent), the event store's types and
 * upcasters, the feed index that `events verify` recomputes, and the start-up check that
 * every event type is projected. A new area adds its aggregate here.
 */
export const AGGREGATES = [users, groups, members, projects, environments, broadcastMessages, deployKeys, notificationSettings, protectedBranches, protectedTags, applicationSettings, integrations, hooks, featureFlags, scim, geoNodes, epics, todos, containerRepositories, milestones, labels, repository, mergeRequests, issues, snippets, notes, awardEmoji, boards, issueLinks, userSshKeys] as const;

/**
 * Every event an aggregate defines: the one union the tables keyed by event type (the
 * activity and audit mappings, the integrations' delivery triggers) are checked against, so
 * an entry for a type no aggregate defines is a type error, and the activity and audit
 * tables must name every type.
 */
export type KnownEvent = EventsOf<(typeof AGGREGATES)[number]>;
export type KnownEventType = KnownEvent['type'];
export type DataOf<T extends KnownEventType> = Extract<KnownEvent, { type: T }>['data'];
