import { featureFlagAuditMessage } from '../feature-flags/audit-messages.js';
import type { FeatureFlagEvent } from '../feature-flags/events.js';
import type { DataOf, KnownEventType } from '../aggregates.js';
import { ROLE_NAMES } from '../members.js';
import type { Visibility } from '../access.js';

/**
 * Audit events (GitLab EE's AuditEvent) are not stored: each is one event of the log, read
 * through this mapping. An event type is either audited here, with what GitLab EE 12 records
 * for the same action (ee/app/services/ee/audit_event_service.rb and the services that call
 * it), or listed in NOT_AUDITED with the reason. A new event type goes in one of the two
 * (test/domain/audit-feed.test.ts holds every type of the aggregates to it).
 */


export const AUDIT_ENTITY_TYPES = ['User', 'Group', 'Project'] as const;
export type AuditEntityType = (typeof AUDIT_ENTITY_TYPES)[number];

export interface AuditEntity {
  readonly type: AuditEntityType;
  readonly id: number;
}

/** What a record shows besides its event: names as they are when the feed is read. */
export interface AuditLookup {
  /** A user's name; null when the user no longer exists. */
  userName(id: number): string | null;
}

/** One audit record of an event, without what every record adds (author_name, ip_address, entity_path). */
export interface AuditDescription {
  readonly entity: AuditEntity;
  /** The variable keys, first in GitLab's details: `add`/`as`, `remove`, `change`/`from`/`to`. */
  readonly action: Readonly<Record<string, unknown>>;
  /** `target_id`, `target_type`, `target_details`, after author_name in GitLab's details. */
  readonly target: { readonly target_id: number | string; readonly target_type: string; readonly target_details: string };
  /** The entity's full path when the event knows it (a creation, a rename, a deletion); otherwise the feed reads the current one. */
  readonly entityPath?: string | null;
}

export interface AuditMapping<T extends KnownEventType> {
  /**
   * Only events whose `data.changes` has one of these keys are audited (GitLab audits an
   * update only when an audited column changed). The feed checks it in SQL so pages and
   * counts stay exact.
   */
  readonly changesAnyOf?: readonly string[];
  /** Users whose names the record shows (the author's is read anyway). */
  readonly users?: (data: DataOf<T>) => readonly number[];
  readonly describe: (data: DataOf<T>, lookup: AuditLookup) => AuditDescription;
}

// ───────────────────────────── GitLab's detail shapes ─────────────────────────────

/** Gitlab::Access.options_with_owner.key / human_access. */
const role = (level: number | null) => (level === null ? null : (ROLE_NAMES[level] ?? null));
/** Gitlab::VisibilityLevel.level_name. */
const visibilityName = (visibility: Visibility | null | undefined) => (visibility ? visibility[0]!.toUpperCase() + visibility.slice(1) : null);

/** AuditEventService#for_member: the target is the member, shown by the user's name ("Deleted User" once gone). */
function memberRecord(data: { source_type: 'Namespace' | 'Project'; source_id: number; user_id: number }, action: Record<string, unknown>, lookup: AuditLookup): AuditDescription {
  return {
    entity: { type: data.source_type === 'Project' ? 'Project' : 'Group', id: data.source_id },
    action,
    // GitLab: target_id is the Member row's id; forgelog's memberships have no id of their own, so it is the user's.
    target: { target_id: data.user_id, target_type: 'User', target_details: lookup.userName(data.user_id) ?? 'Deleted User' },
  };
}
const memberUsers = (data: { user_id: number }) => [data.user_id];

/** AuditEventService#for_project / #for_group (for_custom_model): the target is the full path, its id too. */
const customModel = (entity: AuditEntity, model: 'project' | 'group', verb: 'add' | 'remove', fullPath: string): AuditDescription => ({
  entity,
  action: { [verb]: model },
  target: { target_id: fullPath, target_type: model === 'project' ? 'Project' : 'Group', target_details: fullPath },
  entityPath: fullPath,
});

/** AuditEventService#for_changes: `change` names the column, the target is the entity itself. */
const changeRecord = (entity: AuditEntity, change: string, from: unknown, to: unknown, targetDetails: string, entityPath?: string | null): AuditDescription => ({
  entity,
  action: { change, from, to },
  target: { target_id: entity.id, target_type: entity.type, target_details: targetDetails },
  ...(entityPath === undefined ? {} : { entityPath }),
});

/** FeatureFlags::BaseService#audit_event: the project's record, the flag as target, GitLab's message. */
const featureFlagRecord = (event: FeatureFlagEvent): AuditDescription => ({
  entity: { type: 'Project', id: event.data.project_id },
  action: { custom_message: featureFlagAuditMessage(event) },
  target: { target_id: event.data.id, target_type: 'Operations::FeatureFlag', target_details: event.data.name },
});

/** AuditEventService#for_project_group_link: the shared group's record, the project (its id and full path) as target. */
const projectGroupLinkRecord = (data: { id: number; group_id: number; path_with_namespace: string }, action: Record<string, unknown>): AuditDescription => ({
  entity: { type: 'Group', id: data.group_id },
  action,
  target: { target_id: data.id, target_type: 'Project', target_details: data.path_with_namespace },
});

// ───────────────────────────── The mapping ─────────────────────────────

/** GitLab's EE::Audit::ProjectChangesAuditor order; one record per event (see docs/architecture.md "Audit events"). */
const PROJECT_AUDITED_CHANGES = ['visibility', 'path', 'name'] as const;

export const AUDITED = {
  // Members (EE::Members::CreateService / ApproveAccessRequestService / UpdateService / DestroyService).
  MemberAdded: { users: memberUsers, describe: (d, lookup) => memberRecord(d, { add: 'user_access', as: role(d.access_level) }, lookup) },
  AccessRequestApproved: { users: memberUsers, describe: (d, lookup) => memberRecord(d, { add: 'user_access', as: role(d.access_level) }, lookup) },
  MemberUpdated: {
    users: memberUsers,
    describe: (d, lookup) => memberRecord(d, { change: 'access_level', from: role(d.previous_access_level), to: role(d.access_level) }, lookup),
  },
  MemberRemoved: { users: memberUsers, describe: (d, lookup) => memberRecord(d, { remove: 'user_access' }, lookup) },
  // GitLab: denying (or withdrawing) an access request destroys the requester through Members::DestroyService.
  AccessRequestDenied: { users: memberUsers, describe: (d, lookup) => memberRecord(d, { remove: 'user_access' }, lookup) },

  // Projects (EE::Projects::CreateService, DestroyService, ProjectChangesAuditor).
  ProjectCreated: { describe: (d) => customModel({ type: 'Project', id: d.id }, 'project', 'add', d.path_with_namespace) },
  // GitLab audits the removal when DELETE /projects/:id is asked for, by the user who asked.
  ProjectDeletionScheduled: { describe: (d) => customModel({ type: 'Project', id: d.id }, 'project', 'remove', d.path_with_namespace) },
  ProjectUpdated: {
    changesAnyOf: PROJECT_AUDITED_CHANGES,
    describe: (d) => {
      const entity: AuditEntity = { type: 'Project', id: d.id };
      const previous = d.previous;
      const path = d.path_with_namespace ?? '';
      const change = PROJECT_AUDITED_CHANGES.find((key) => d.changes[key] !== undefined) ?? 'visibility';
      // GitLab: the target is the project's full path after the change.
      if (change === 'visibility') return changeRecord(entity, 'visibility', visibilityName(previous?.visibility), visibilityName(d.changes.visibility), path, d.path_with_namespace);
      if (change === 'path') return changeRecord(entity, 'path', previous?.path_with_namespace ?? null, d.path_with_namespace, path, d.path_with_namespace);
      return changeRecord(entity, 'name', previous?.name_with_namespace ?? null, d.name_with_namespace, path, d.path_with_namespace);
    },
  },

  // EE::Audit::ProjectChangesAuditor after Projects::TransferService: audit_changes(:namespace_id, as: 'namespace').
  ProjectTransferred: {
    describe: (d) => changeRecord({ type: 'Project', id: d.id }, 'namespace', d.previous_path_with_namespace, d.path_with_namespace, d.path_with_namespace, d.path_with_namespace),
  },

  // Project group links (EE::Projects::GroupLinks::CreateService, DestroyService: the group's security event, the project as target).
  ProjectGroupLinkCreated: { describe: (d) => projectGroupLinkRecord(d, { add: 'project_access', as: role(d.group_access) }) },
  ProjectGroupLinkDeleted: { describe: (d) => projectGroupLinkRecord(d, { remove: 'project_access' }) },

  // Groups (EE::Groups::CreateService, DestroyService, GroupChangesAuditor: visibility only in 12.x).
  GroupCreated: { describe: (d) => customModel({ type: 'Group', id: d.id }, 'group', 'add', d.full_path) },
  GroupDeletionScheduled: { describe: (d) => customModel({ type: 'Group', id: d.id }, 'group', 'remove', d.full_path) },
  GroupUpdated: {
    changesAnyOf: ['visibility'],
    describe: (d) =>
      changeRecord({ type: 'Group', id: d.id }, 'visibility', visibilityName(d.previous_visibility), visibilityName(d.changes.visibility), d.full_path, d.full_path),
  },

  // Users (EE::Users::UpdateService: audit_changes(:email, as: 'email address'), (:encrypted_password, as: 'password', skip_changes: true)).
  UserProfileUpdated: {
    changesAnyOf: ['email'],
    users: (d) => [d.id],
    describe: (d, lookup) => changeRecord({ type: 'User', id: d.id }, 'email address', d.previous_email, d.changes.email, lookup.userName(d.id) ?? 'Deleted User'),
  },
  UserPasswordChanged: {
    users: (d) => [d.id],
    describe: (d, lookup) => changeRecord({ type: 'User', id: d.id }, 'password', null, null, lookup.userName(d.id) ?? 'Deleted User'),
  },

  // Feature flags (EE's FeatureFlags::CreateService, UpdateService, DestroyService: a project's security event with a custom message).
  FeatureFlagCreated: { describe: (d) => featureFlagRecord({ type: 'FeatureFlagCreated', data: d }) },
  FeatureFlagUpdated: { describe: (d) => featureFlagRecord({ type: 'FeatureFlagUpdated', data: d }) },
  FeatureFlagDeleted: { describe: (d) => featureFlagRecord({ type: 'FeatureFlagDeleted', data: d }) },
  FeatureFlagScopeCreated: { describe: (d) => featureFlagRecord({ type: 'FeatureFlagScopeCreated', data: d }) },
  FeatureFlagScopeUpdated: { describe: (d) => featureFlagRecord({ type: 'FeatureFlagScopeUpdated', data: d }) },
  FeatureFlagScopeDeleted: { describe: (d) => featureFlagRecord({ type: 'FeatureFlagScopeDeleted', data: d }) },
} satisfies { readonly [T in KnownEventType]?: AuditMapping<T> };

export type AuditedEventType = keyof typeof AUDITED;

/** Event types with no audit event, and why (what GitLab EE 12 does for the same action). */
export const NOT_AUDITED = {
  UserCreated: 'GitLab 12 records no audit event when a user is created (13.x does)',
  UserBlocked: 'GitLab 12 records no audit event when a user is blocked (14.x does)',
  UserUnblocked: 'GitLab 12 records no audit event when a user is unblocked',
  UserDeleted: 'GitLab 12 records no audit event when a user is deleted (13.x does)',
  UserStatusSet: 'not audited',
  UserStatusCleared: 'not audited',
  PersonalAccessTokenCreated: 'GitLab 12 records no audit event for tokens (13.6 does)',
  PersonalAccessTokenRevoked: 'GitLab 12 records no audit event for tokens (13.6 does)',
  UserEmailChangeRequested: 'the email column does not change until confirmed, so Users::UpdateService audits nothing',
  UserCustomAttributeSet: 'not audited',
  UserCustomAttributeDeleted: 'not audited',
  UserAvatarChanged: 'GitLab 12 audits only email and password changes of a user',
  GroupDeleted: 'the removal is audited when it is asked for (GroupDeletionScheduled)',
  GroupCustomAttributeSet: 'not audited',
  GroupCustomAttributeDeleted: 'not audited',
  GroupAvatarChanged: 'GitLab 12 audits only visibility changes of a group',
  AccessRequested: 'GitLab audits the approval or denial, not the request',
  ProjectArchived: 'GitLab 12 records no audit event for archiving',
  ProjectUnarchived: 'GitLab 12 records no audit event for archiving',
  ProjectStarred: 'not audited',
  ProjectUnstarred: 'not audited',
  ProjectForkLinked: 'GitLab 12 audits the fork as a project creation, not its relation',
  ProjectForkUnlinked: 'GitLab 12 records no audit event for removing a fork relation',
  ProjectAvatarChanged: 'GitLab 12 audits only visibility, path and name changes of a project',
  ProjectDeleted: 'the removal is audited when it is asked for (ProjectDeletionScheduled)',
  EnvironmentCreated: 'not audited',
  EnvironmentUpdated: 'not audited',
  EnvironmentStopped: 'not audited',
  EnvironmentDeleted: 'not audited',
  SnippetCreated: 'GitLab EE 12 audits no snippet change',
  SnippetUpdated: 'GitLab EE 12 audits no snippet change',
  SnippetDeleted: 'GitLab EE 12 audits no snippet change',
  BroadcastMessageCreated: 'not audited',
  BroadcastMessageUpdated: 'not audited',
  BroadcastMessageDeleted: 'not audited',
  GeoNodeCreated: 'GitLab 12 audits no Geo node change (Geo::NodeCreateService calls no AuditEventService)',
  GeoNodeUpdated: 'GitLab 12 audits no Geo node change',
  GeoNodeDeleted: 'GitLab 12 audits no Geo node change',
  DeployKeyCreated: 'GitLab 12 audits deploy keys from the web UI only (Projects::DeployKeysController), not the API',
  DeployKeyTitleChanged: 'GitLab 12 audits deploy keys from the web UI only',
  DeployKeyLinked: 'GitLab 12 audits deploy keys from the web UI only',
  DeployKeyLinkUpdated: 'GitLab 12 audits deploy keys from the web UI only',
  DeployKeyUnlinked: 'GitLab 12 audits deploy keys from the web UI only',
  DeployKeyDeleted: 'GitLab 12 audits deploy keys from the web UI only',
  UserSshKeyAdded: "GitLab 12 audits an SSH key added from the web UI only (EE's Keys::CreateService); the API saves `user.keys.new` unaudited",
  UserSshKeyRemoved: 'GitLab 12 records no audit event when an SSH key is removed',
  NotificationSettingChanged: 'not audited',
  ProtectedBranchCreated: 'GitLab 12 records no audit event for protected branches',
  ProtectedBranchUpdated: 'GitLab 12 records no audit event for protected branches',
  ProtectedBranchDeleted: 'GitLab 12 records no audit event for protected branches',
  ProtectedTagCreated: 'GitLab 12 records no audit event for protected tags',
  ProtectedTagDeleted: 'GitLab 12 records no audit event for protected tags',
  ApplicationSettingsChanged: 'GitLab 12 records no audit event for application settings',
  IntegrationSaved: 'GitLab 12 records no audit event for project services',
  IntegrationDisabled: 'GitLab 12 records no audit event for project services',
  HookCreated: 'GitLab 12 records no audit event for webhooks',
  HookUpdated: 'GitLab 12 records no audit event for webhooks',
  HookDeleted: 'GitLab 12 records no audit event for webhooks',
  SamlProviderConfigured: 'GitLab 12 records no audit event for group SAML settings (its UI changes them unaudited)',
  ScimTokenGenerated: 'GitLab 12 records no audit event for a SCIM token',
  GroupSamlIdentityLinked: 'GitLab 12 records no audit event for a SAML identity (the membership added with it is audited)',
  GroupSamlIdentityUidChanged: 'GitLab 12 records no audit event for a SAML identity',
  GroupSamlIdentityUnlinked: 'GitLab 12 records no audit event for a SAML identity (the membership removed with it is audited)',
  EpicCreated: 'GitLab 12 records no audit event for epics',
  EpicUpdated: 'GitLab 12 records no audit event for epics',
  EpicClosed: 'GitLab 12 records no audit event for epics',
  EpicReopened: 'GitLab 12 records no audit event for epics',
  EpicDeleted: 'GitLab 12 records no audit event for epics',
  MilestoneCreated: 'GitLab 12 records no audit event for milestones',
  MilestoneUpdated: 'GitLab 12 records no audit event for milestones',
  MilestoneClosed: 'GitLab 12 records no audit event for milestones',
  MilestoneReopened: 'GitLab 12 records no audit event for milestones',
  MilestoneDeleted: 'GitLab 12 records no audit event for milestones',
  LabelCreated: 'GitLab 12 records no audit event for labels',
  LabelUpdated: 'GitLab 12 records no audit event for labels',
  LabelDeleted: 'GitLab 12 records no audit event for labels',
  BoardCreated: 'GitLab 12 records no audit event for issue boards',
  BoardUpdated: 'GitLab 12 records no audit event for issue boards',
  BoardDeleted: 'GitLab 12 records no audit event for issue boards',
  ListCreated: 'GitLab 12 records no audit event for issue boards',
  ListMoved: 'GitLab 12 records no audit event for issue boards',
  ListDeleted: 'GitLab 12 records no audit event for issue boards',
  IssueLinkCreated: 'GitLab 12 records no audit event for issue links',
  IssueLinkDeleted: 'GitLab 12 records no audit event for issue links',
  MergeRequestOpened: 'GitLab 12 records no audit event for merge requests',
  MergeRequestUpdated: 'GitLab 12 records no audit event for merge requests',
  MergeRequestClosed: 'GitLab 12 records no audit event for merge requests',
  MergeRequestReopened: 'GitLab 12 records no audit event for merge requests',
  MergeRequestMerged: 'GitLab 12 records no audit event for merge requests',
  MergeRequestDeleted: 'GitLab 12 records no audit event for merge requests',
  MergeRequestVersionRecorded: 'GitLab 12 records no audit event for merge requests',
  MergeRequestMergeStatusChecked: 'GitLab 12 records no audit event for merge requests',
  MergeRequestRebaseFailed: 'GitLab 12 records no audit event for merge requests',
  MergeRequestMergeRefUpdated: 'GitLab 12 records no audit event for merge requests',
  MergeRequestTimeEstimateChanged: 'GitLab 12 records no audit event for time tracking',
  MergeRequestTimeSpent: 'GitLab 12 records no audit event for time tracking',
  MergeRequestSubscribed: 'GitLab 12 records no audit event for subscriptions',
  MergeRequestUnsubscribed: 'GitLab 12 records no audit event for subscriptions',
  IssueOpened: 'GitLab 12 records no audit event for issues',
  IssueUpdated: 'GitLab 12 records no audit event for issues',
  IssueClosed: 'GitLab 12 records no audit event for issues',
  IssueReopened: 'GitLab 12 records no audit event for issues',
  IssueMoved: 'GitLab 12 records no audit event for issues',
  IssueDeleted: 'GitLab 12 records no audit event for issues',
  IssueTimeEstimateChanged: 'GitLab 12 records no audit event for time tracking',
  IssueTimeSpent: 'GitLab 12 records no audit event for time tracking',
  IssueAddedToEpic: 'GitLab 12 records no audit event for epic issues',
  IssueEpicPositionChanged: 'GitLab 12 records no audit event for epic issues',
  IssueRemovedFromEpic: 'GitLab 12 records no audit event for epic issues',
  IssueEpicLinkPassedOn: 'GitLab 12 records no audit event for epic issues',
  IssueEpicLinkInherited: 'GitLab 12 records no audit event for epic issues',
  IssueSubscribed: 'GitLab 12 records no audit event for subscriptions',
  IssueUnsubscribed: 'GitLab 12 records no audit event for subscriptions',
  NoteAdded: 'GitLab 12 records no audit event for notes',
  NoteConvertedToDiscussion: 'GitLab 12 records no audit event for notes',
  NoteEdited: 'GitLab 12 records no audit event for notes',
  NoteCopied: 'GitLab 12 records no audit event for notes',
  NoteDeleted: 'GitLab 12 records no audit event for notes',
  NotesResolved: 'GitLab 12 records no audit event for discussions',
  NotesUnresolved: 'GitLab 12 records no audit event for discussions',
  AwardEmojiAwarded: 'GitLab 12 records no audit event for award emoji',
  AwardEmojiRemoved: 'GitLab 12 records no audit event for award emoji',
  TodoCreated: 'not audited',
  TodosMarkedDone: 'not audited',
  ContainerRepositoryCreated: 'GitLab 12 records no audit event for the container registry',
  ContainerRepositoryTagPushed: 'GitLab 12 records no audit event for the container registry',
  ContainerRepositoryTagDeleted: 'GitLab 12 records no audit event for the container registry',
  ContainerRepositoryCleanupScheduled: 'GitLab 12 records no audit event for the container registry',
  ContainerRepositoryDeletionScheduled: 'GitLab 12 records no audit event for the container registry',
  ContainerRepositoryDeleted: 'GitLab 12 records no audit event for the container registry',
  BranchCreated: 'GitLab 12 records no audit event for a push',
  BranchUpdated: 'GitLab 12 records no audit event for a push',
  BranchDeleted: 'GitLab 12 records no audit event for a push',
  TagCreated: 'GitLab 12 records no audit event for a push',
  TagDeleted: 'GitLab 12 records no audit event for a push',
  TagReleaseSaved: 'GitLab 12 records no audit event for a release',
} satisfies { readonly [T in Exclude<KnownEventType, AuditedEventType>]: string };

export const AUDITED_EVENT_TYPES = Object.keys(AUDITED) as AuditedEventType[];

/** The entity types whose records an event type can give (member events: the group's or the project's). */
export const AUDIT_ENTITY_TYPES_OF: { readonly [T in AuditedEventType]: readonly AuditEntityType[] } = {
  MemberAdded: ['Group', 'Project'],
  AccessRequestApproved: ['Group', 'Project'],
  MemberUpdated: ['Group', 'Project'],
  MemberRemoved: ['Group', 'Project'],
  AccessRequestDenied: ['Group', 'Project'],
  ProjectCreated: ['Project'],
  ProjectDeletionScheduled: ['Project'],
  ProjectUpdated: ['Project'],
  ProjectGroupLinkCreated: ['Group'],
  ProjectGroupLinkDeleted: ['Group'],
  ProjectTransferred: ['Project'],
  GroupCreated: ['Group'],
  GroupDeletionScheduled: ['Group'],
  GroupUpdated: ['Group'],
  UserProfileUpdated: ['User'],
  UserPasswordChanged: ['User'],
  FeatureFlagCreated: ['Project'],
  FeatureFlagUpdated: ['Project'],
  FeatureFlagDeleted: ['Project'],
  FeatureFlagScopeCreated: ['Project'],
  FeatureFlagScopeUpdated: ['Project'],
  FeatureFlagScopeDeleted: ['Project'],
};

export const isAudited = (type: string): type is AuditedEventType => Object.hasOwn(AUDITED, type);

/** The audit record of an (upcast) event of an audited type. */
export function describeAudit(type: AuditedEventType, data: unknown, lookup: AuditLookup): AuditDescription {
  return (AUDITED[type] as AuditMapping<AuditedEventType>).describe(data as never, lookup);
}

/** The users whose names the record of an event shows, besides its author. */
export function auditUsers(type: AuditedEventType, data: unknown): readonly number[] {
  return (AUDITED[type] as AuditMapping<AuditedEventType>).users?.(data as never) ?? [];
}

/** The keys of `data.changes` that make an event of the type an audit event, when not every one is. */
export function auditChangesAnyOf(type: AuditedEventType): readonly string[] | undefined {
  return (AUDITED[type] as AuditMapping<AuditedEventType>).changesAnyOf;
}
