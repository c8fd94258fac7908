import type { ApplicationSettingsEvent } from './application-settings/decider.js';
import type { BroadcastMessageEvent } from './broadcast-messages.js';
import type { ContainerRepositoryEvent } from './container-repositories/decider.js';
import type { DeployKeyEvent } from './deploy-keys.js';
import type { EnvironmentEvent } from './environments.js';
import type { EpicEvent } from './epics.js';
import type { FeatureFlagEvent } from './feature-flags/events.js';
import type { GeoNodeEvent } from './geo-nodes.js';
import type { GroupEvent } from './groups/events.js';
import type { IntegrationEvent } from './integrations/decider.js';
import type { LabelEvent } from './labels.js';
import type { MemberEvent } from './members.js';
import type { MergeRequestEvent } from './merge-requests/events.js';
import type { MilestoneEvent } from './milestones.js';
import type { NotificationSettingEvent } from './notification-settings.js';
import type { ProjectEvent } from './projects/events.js';
import type { ProtectedBranchEvent } from './protected-branches.js';
import type { RepositoryEvent } from './repository/decider.js';
import type { ScimEvent } from './scim.js';
import type { TodoEvent } from './todos.js';
import type { UserEvent } from './users.js';

/**
 * Every event an aggregate defines: the one union the tables keyed by event type (the
 * activity and audit mappings, the integrations' delivery triggers) are checked against, so
 * an entry for a type no aggregate defines is a type error, and the activity and audit
 * tables must name every type. A new area adds its union here; the feed tests
 * (test/domain/activity-feed.test.ts, audit-feed.test.ts) fail on an aggregate left out.
 */
export type KnownEvent =
  | UserEvent
  | GroupEvent
  | MemberEvent
  | ProjectEvent
  | EnvironmentEvent
  | BroadcastMessageEvent
  | DeployKeyEvent
  | NotificationSettingEvent
  | ProtectedBranchEvent
  | ApplicationSettingsEvent
  | IntegrationEvent
  | FeatureFlagEvent
  | ScimEvent
  | GeoNodeEvent
  | EpicEvent
  | MilestoneEvent
  | MergeRequestEvent
  | LabelEvent
  | TodoEvent
  | ContainerRepositoryEvent
  | RepositoryEvent;

export type KnownEventType = KnownEvent['type'];
export type DataOf<T extends KnownEventType> = Extract<KnownEvent, { type: T }>['data'];
