import type { DataOf, KnownEventType } from '../aggregates.js';

/**
 * The activity feed (GitLab's `events` table, GET /events …) is not a table here: it is a
 * query over the event log (src/projections/feeds/activity.ts) and this one pure mapping per
 * event type. An area whose events are activity adds its rows to ACTIVITY; one whose events
 * are not names them in NO_ACTIVITY with the reason. A test holds every event type of every
 * aggregate to exactly one of the two.
 */

// ───────────────────────────── GitLab's vocabulary ─────────────────────────────

/** Event::ACTIONS (the `action` filter's values). */
export const ACTIVITY_ACTIONS = ['created', 'updated', 'closed', 'reopened', 'pushed', 'commented', 'merged', 'joined', 'left', 'destroyed', 'expired'] as const;
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];

/** Event::TARGET_TYPES: the `target_type` filter's values and the class each names. */
export const ACTIVITY_TARGET_TYPES = {
  issue: 'Issue',
  milestone: 'Milestone',
  merge_request: 'MergeRequest',
  note: 'Note',
  project: 'Project',
  snippet: 'Snippet',
  user: 'User',
} as const;
export type ActivityTargetFilter = keyof typeof ACTIVITY_TARGET_TYPES;
export const ACTIVITY_TARGET_FILTERS = Object.keys(ACTIVITY_TARGET_TYPES) as [ActivityTargetFilter, ...ActivityTargetFilter[]];

/** Entities::PushEventPayload. */
export interface PushData {
  readonly commit_count: number;
  readonly action: 'pushed' | 'created' | 'removed';
  readonly ref_type: 'branch' | 'tag';
  readonly commit_from: string | null;
  readonly commit_to: string | null;
  readonly ref: string;
  readonly commit_title: string | null;
  readonly ref_count: number | null;
}

/** The parts of Entities::Note an event carries (its author is the event's). */
export interface NoteData {
  readonly id: number;
  readonly body: string;
  readonly attachment: string | null;
  readonly created_at: string;
  readonly system: boolean;
  /** null for a commit's note (GitLab's commit notes have a commit_id instead). */
  readonly noteable_id: number | null;
  readonly noteable_type: string;
  readonly noteable_iid: number | null;
}

/** What one event shows beyond the columns every activity has (project, author, time). */
export interface ActivityRecord {
  readonly action_name: string;
  readonly target_id: number | null;
  /** GitLab: the target's iid, or its id when it has none. */
  readonly target_iid: number | null;
  /** GitLab's class name of the target; null for a project's creation and for memberships. */
  readonly target_type: string | null;
  readonly target_title: string | null;
  /** Pushes only. */
  readonly push_data?: PushData;
  /** Comments only. */
  readonly note?: NoteData;
}

export interface ActivityMapping<Data> {
  /** The `action` filter value the event answers to. */
  readonly action: ActivityAction;
  /**
   * The `target_type` filter value the event answers to (a class of ACTIVITY_TARGET_TYPES), or
   * null when no filter value selects it. `record` must then give that class as target_type.
   */
  readonly targetFilter: ActivityTargetFilter | null;
  /**
   * Which index column of the event names its author: `actor` (who acted); `target` (the
   * user the event is about — GitLab's join and leave events are the member's, not the
   * administrator's who added them).
   */
  readonly author: 'actor' | 'target';
  /**
   * No activity when the event, the first of its stream, was committed together with an
   * event of one of these types on the same project or group: GitLab's
   * ProjectMember#post_create_hook records no join for the owner added with the project, and
   * a fork's copied refs are no push.
   */
  readonly notWithCreation?: readonly string[];
  readonly record: (data: Data) => ActivityRecord;
}

type Mappings = { readonly [T in KnownEventType]?: ActivityMapping<DataOf<T>> };

const noTarget = { target_id: null, target_iid: null, target_type: null, target_title: null } as const;

/**
 * A group's activity (created, destroyed, memberships — GitLab 12 records none) has the group
 * as its target: with no project_id, nothing else in the record would say which group.
 */
const groupTarget = (id: number, title: string | null) => ({ target_id: id, target_iid: id, target_type: 'Group', target_title: title });

/** GitLab's join and leave events: the project's (project_id) and no target; a group's name it as target. */
const membership = (actionName: 'joined' | 'left') => (data: { source_type: 'Namespace' | 'Project'; source_id: number }): ActivityRecord => ({
  action_name: actionName,
  ...(data.source_type === 'Namespace' ? groupTarget(data.source_id, null) : noTarget),
});

const epicTarget = (actionName: string, data: { id: number; iid: number; title: string }): ActivityRecord => ({
  action_name: actionName,
  target_id: data.id,
  target_iid: data.iid,
  target_type: 'Epic',
  target_title: data.title,
});

const milestoneTarget = (actionName: string, data: { id: number; iid: number; title: string }): ActivityRecord => ({
  action_name: actionName,
  target_id: data.id,
  target_iid: data.iid,
  target_type: 'Milestone',
  target_title: data.title,
});

const issueTarget = (actionName: string, data: { id: number; iid: number; title: string }): ActivityRecord => ({
  action_name: actionName,
  target_id: data.id,
  target_iid: data.iid,
  target_type: 'Issue',
  target_title: data.title,
});

const mergeRequestTarget = (actionName: string, data: { id: number; iid: number; title: string }): ActivityRecord => ({
  action_name: actionName,
  target_id: data.id,
  target_iid: data.iid,
  target_type: 'MergeRequest',
  target_title: data.title,
});

/** Ruby's String#strip: ASCII whitespace (and trailing NULs), not Unicode spaces as JavaScript's trim. */
const rubyStrip = (text: string) => text.replace(/^[\t\n\v\f\r ]+/, '').replace(/[\0\t\n\v\f\r ]+$/, '');

/** ActiveSupport's String#truncate(length): at most `length` characters, the last three "..." when cut. */
function rubyTruncate(text: string, length: number): string {
  const chars = Array.from(text);
  return chars.length > length ? `${chars.slice(0, length - 3).join('')}...` : text;
}

/**
 * PushEventPayloadService#commit_title: the head commit's message up to its first line
 * break, stripped, truncated to 70 characters; null without a commit (a branch created at a
 * commit it did not bring, a deletion) or on an event that did not record it.
 */
export function pushCommitTitle(message: string | null | undefined): string | null {
  if (message === null || message === undefined) return null;
  const index = message.indexOf('\n');
  return rubyTruncate(rubyStrip(index < 0 ? message : message.slice(0, index + 1)), 70);
}

type PushEventData = {
  branch: string;
  new_sha?: string;
  old_sha?: string;
  commits?: readonly string[];
  commit_details?: readonly { message: string }[] | null;
  /** Every commit the move brought (schema version 3), `commits` listing the newest of them. */
  commit_count?: number;
};

/**
 * GitLab's PushEvent (EventCreateService#push with PushEventPayloadService): no target,
 * Event#action_name "pushed new" / "pushed to" / "deleted" by the payload's action, and the
 * payload from the ref move. `commit_count` is the commits the move brought (GitLab's
 * `total_commits_count`), the title the head's — the first of `commits`, newest first.
 */
const push = (actionName: 'pushed new' | 'pushed to' | 'deleted', action: PushData['action']) => (data: PushEventData): ActivityRecord => ({
  action_name: actionName,
  ...noTarget,
  push_data: {
    commit_count: data.commit_count ?? data.commits?.length ?? 0,
    action,
    ref_type: 'branch',
    commit_from: action === 'created' ? null : (data.old_sha ?? null),
    commit_to: action === 'removed' ? null : (data.new_sha ?? null),
    ref: data.branch,
    commit_title: action === 'removed' ? null : pushCommitTitle(data.commit_details?.[0]?.message),
    ref_count: null,
  },
});

type TagPushEventData = { tag: string; target?: string; old_sha?: string; commit_details?: readonly { message: string }[] };

/**
 * A tag push (Git::TagPushService): the payload carries the tagged commit (one, on creation;
 * none on deletion), `commit_to` the new tag's target — an annotated tag's object.
 */
const tagPush = (actionName: 'pushed new' | 'deleted', action: 'created' | 'removed') => (data: TagPushEventData): ActivityRecord => ({
  action_name: actionName,
  ...noTarget,
  push_data: {
    commit_count: data.commit_details?.length ?? 0,
    action,
    ref_type: 'tag',
    commit_from: action === 'created' ? null : (data.old_sha ?? null),
    commit_to: action === 'removed' ? null : (data.target ?? null),
    ref: data.tag,
    commit_title: action === 'removed' ? null : pushCommitTitle(data.commit_details?.[0]?.message),
    ref_count: null,
  },
});

// ───────────────────────────── The mapping ─────────────────────────────

export const ACTIVITY = {
  // GitLab: EventCreateService#create_project — no target, action_name "created".
  ProjectCreated: { action: 'created', targetFilter: null, author: 'actor', record: () => ({ action_name: 'created', ...noTarget }) },
  // Not in GitLab 12 (its events die with the project): the deletion request, by who asked for it.
  // The project can no longer be looked up, so its title is the path the event records.
  ProjectDeletionScheduled: {
    action: 'destroyed',
    targetFilter: 'project',
    author: 'actor',
    record: (data) => ({ action_name: 'destroyed', target_id: data.id, target_iid: data.id, target_type: 'Project', target_title: data.path_with_namespace }),
  },
  // Not in GitLab 12: a group's creation and deletion request.
  GroupCreated: { action: 'created', targetFilter: null, author: 'actor', record: (data) => ({ action_name: 'created', ...groupTarget(data.id, data.full_path) }) },
  GroupDeletionScheduled: { action: 'destroyed', targetFilter: null, author: 'actor', record: (data) => ({ action_name: 'destroyed', ...groupTarget(data.id, data.full_path) }) },
  // GitLab: ProjectMember#post_create_hook (join_project) and Member#accept_request; group
  // memberships likewise (GitLab 12's GroupMember records none). The member is the author.
  MemberAdded: { action: 'joined', targetFilter: null, author: 'target', notWithCreation: ['ProjectCreated', 'GroupCreated'], record: membership('joined') },
  AccessRequestApproved: { action: 'joined', targetFilter: null, author: 'target', record: membership('joined') },
  // GitLab: ProjectMember#post_destroy_hook (leave_project), whoever removed the member.
  MemberRemoved: { action: 'left', targetFilter: null, author: 'target', record: membership('left') },
  // GitLab EE: EventCreateService#open_epic / close_epic / reopen_epic, the group's (no project);
  // Event#action_name says "opened" for a creation and a reopening. Event::TARGET_TYPES has no epic.
  EpicCreated: { action: 'created', targetFilter: null, author: 'actor', record: (data) => epicTarget('opened', data) },
  EpicClosed: { action: 'closed', targetFilter: null, author: 'actor', record: (data) => epicTarget('closed', data) },
  EpicReopened: { action: 'reopened', targetFilter: null, author: 'actor', record: (data) => epicTarget('opened', data) },
  // GitLab: EventCreateService#open_milestone / close_milestone / reopen_milestone /
  // destroy_milestone; Event#action_name says "opened" for a creation and a reopening.
  MilestoneCreated: { action: 'created', targetFilter: 'milestone', author: 'actor', record: (data) => milestoneTarget('opened', data) },
  MilestoneClosed: { action: 'closed', targetFilter: 'milestone', author: 'actor', record: (data) => milestoneTarget('closed', data) },
  MilestoneReopened: { action: 'reopened', targetFilter: 'milestone', author: 'actor', record: (data) => milestoneTarget('opened', data) },
  MilestoneDeleted: { action: 'destroyed', targetFilter: 'milestone', author: 'actor', record: (data) => milestoneTarget('destroyed', data) },
  // GitLab: EventCreateService#open_mr / close_mr / reopen_mr / merge_mr; Event#action_name
  // says "opened" for a creation and a reopening, "accepted" for a merge.
  MergeRequestOpened: { action: 'created', targetFilter: 'merge_request', author: 'actor', record: (data) => mergeRequestTarget('opened', data) },
  MergeRequestClosed: { action: 'closed', targetFilter: 'merge_request', author: 'actor', record: (data) => mergeRequestTarget('closed', data) },
  MergeRequestReopened: { action: 'reopened', targetFilter: 'merge_request', author: 'actor', record: (data) => mergeRequestTarget('opened', data) },
  MergeRequestMerged: { action: 'merged', targetFilter: 'merge_request', author: 'actor', record: (data) => mergeRequestTarget('accepted', data) },
  // GitLab: EventCreateService#open_issue / close_issue / reopen_issue; Event#action_name says
  // "opened" for a creation and a reopening. A moved issue's closing is its IssueClosed.
  IssueOpened: { action: 'created', targetFilter: 'issue', author: 'actor', record: (data) => issueTarget('opened', data) },
  IssueClosed: { action: 'closed', targetFilter: 'issue', author: 'actor', record: (data) => issueTarget('closed', data) },
  IssueReopened: { action: 'reopened', targetFilter: 'issue', author: 'actor', record: (data) => issueTarget('opened', data) },
  // GitLab: a push through the API runs the post-receive hooks (Git::BranchPushService →
  // EventCreateService#push): a new branch, a move, a deletion. Event::TARGET_TYPES has none.
  // A fork's copied refs (committed with its ProjectForkLinked) are no push: ForkService and
  // Project#after_import run no post-receive.
  BranchCreated: { action: 'pushed', targetFilter: null, author: 'actor', notWithCreation: ['ProjectForkLinked'], record: push('pushed new', 'created') },
  BranchUpdated: { action: 'pushed', targetFilter: null, author: 'actor', record: push('pushed to', 'pushed') },
  BranchDeleted: { action: 'pushed', targetFilter: null, author: 'actor', record: push('deleted', 'removed') },
  // GitLab: Git::TagPushService → EventCreateService#push, ref_type tag.
  TagCreated: { action: 'pushed', targetFilter: null, author: 'actor', notWithCreation: ['ProjectForkLinked'], record: tagPush('pushed new', 'created') },
  TagDeleted: { action: 'pushed', targetFilter: null, author: 'actor', record: tagPush('deleted', 'removed') },
  // GitLab: EventCreateService#leave_note — "commented on", the note as target and as `note`.
  NoteAdded: {
    action: 'commented',
    targetFilter: 'note',
    author: 'actor',
    record: (data) => ({
      action_name: 'commented on',
      target_id: data.id,
      target_iid: data.id,
      target_type: 'Note',
      target_title: null,
      note: { id: data.id, body: data.body, attachment: null, created_at: data.created_at, system: false, noteable_id: data.noteable_id, noteable_type: data.noteable_type, noteable_iid: data.noteable_iid },
    }),
  },
} as const satisfies Mappings;

export type ActivityEventType = keyof typeof ACTIVITY;

/** Event types that are deliberately no activity, and why (GitLab records no event for them). */
export const NO_ACTIVITY = {
  // users
  UserCreated: 'GitLab records no event for a new account',
  UserProfileUpdated: 'profile edits are not activity in GitLab',
  UserPasswordChanged: 'a secret change; GitLab records no event',
  UserBlocked: 'an administrator action on an account (audit, not activity)',
  UserUnblocked: 'an administrator action on an account (audit, not activity)',
  UserDeleted: "GitLab deletes the user's events with the user",
  UserStatusSet: 'user status is not activity in GitLab',
  UserStatusCleared: 'user status is not activity in GitLab',
  PersonalAccessTokenCreated: 'tokens are audit, not activity',
  PersonalAccessTokenRevoked: 'tokens are audit, not activity',
  UserEmailChangeRequested: 'profile edits are not activity in GitLab',
  UserCustomAttributeSet: 'administrator metadata, not activity',
  UserCustomAttributeDeleted: 'administrator metadata, not activity',
  UserAvatarChanged: 'profile edits are not activity in GitLab',
  // groups
  GroupUpdated: 'settings changes are not activity in GitLab',
  GroupDeleted: "the removal worker's completion of GroupDeletionScheduled (one act, one activity)",
  GroupCustomAttributeSet: 'administrator metadata, not activity',
  GroupCustomAttributeDeleted: 'administrator metadata, not activity',
  GroupAvatarChanged: 'settings changes are not activity in GitLab',
  // members
  MemberUpdated: 'ProjectMember#post_update_hook only notifies',
  AccessRequested: 'a pending member runs no post_create_hook in GitLab',
  AccessRequestDenied: 'a pending member runs no post_destroy_hook in GitLab',
  // projects
  ProjectUpdated: 'settings changes are not activity in GitLab',
  ProjectAvatarChanged: 'settings changes are not activity in GitLab',
  ProjectGroupLinkCreated: 'Projects::GroupLinks::CreateService records no event (EventCreateService is not called)',
  ProjectGroupLinkDeleted: 'Projects::GroupLinks::DestroyService records no event',
  ProjectArchived: 'GitLab records no event for archiving',
  ProjectUnarchived: 'GitLab records no event for unarchiving',
  ProjectStarred: 'GitLab records no event for stars',
  ProjectUnstarred: 'GitLab records no event for stars',
  ProjectDeleted: "the removal worker's completion of ProjectDeletionScheduled (one act, one activity)",
  ProjectForkLinked: "Projects::ForkService records no event of its own (the fork's creation is its ProjectCreated)",
  ProjectForkUnlinked: 'Projects::UnlinkForkService records no event',
  ProjectTransferred: 'Projects::TransferService records no event (the audit shows it)',
  // environments, deploy keys, protected branches, settings, broadcast messages
  EnvironmentCreated: 'GitLab records no event for environments',
  EnvironmentUpdated: 'GitLab records no event for environments',
  EnvironmentStopped: 'GitLab records no event for environments',
  EnvironmentDeleted: 'GitLab records no event for environments',
  SnippetCreated: 'GitLab 12 records no event for snippets (only notes on them)',
  SnippetUpdated: 'GitLab 12 records no event for snippets (only notes on them)',
  SnippetDeleted: 'GitLab 12 records no event for snippets (only notes on them)',
  BroadcastMessageCreated: 'instance administration, not activity',
  BroadcastMessageUpdated: 'instance administration, not activity',
  BroadcastMessageDeleted: 'instance administration, not activity',
  GeoNodeCreated: 'instance administration, not activity',
  GeoNodeUpdated: 'instance administration, not activity',
  GeoNodeDeleted: 'instance administration, not activity',
  DeployKeyCreated: 'GitLab records no event for deploy keys',
  DeployKeyTitleChanged: 'GitLab records no event for deploy keys',
  DeployKeyLinked: 'GitLab records no event for deploy keys',
  DeployKeyLinkUpdated: 'GitLab records no event for deploy keys',
  DeployKeyUnlinked: 'GitLab records no event for deploy keys',
  DeployKeyDeleted: 'GitLab records no event for deploy keys',
  UserSshKeyAdded: 'GitLab records no event for SSH keys',
  UserSshKeyRemoved: 'GitLab records no event for SSH keys',
  NotificationSettingChanged: 'personal preferences, not activity',
  ProtectedBranchCreated: 'GitLab records no event for protected branches',
  ProtectedBranchUpdated: 'GitLab records no event for protected branches',
  ProtectedBranchDeleted: 'GitLab records no event for protected branches',
  ProtectedTagCreated: 'GitLab records no event for protected tags',
  ProtectedTagDeleted: 'GitLab records no event for protected tags',
  TagReleaseSaved: 'GitLab 12 records no event for a release',
  ApplicationSettingsChanged: 'instance administration, not activity',
  // integrations
  IntegrationSaved: 'GitLab records no event for a project service',
  IntegrationDisabled: 'GitLab records no event for a project service',
  HookCreated: 'GitLab records no event for a webhook',
  HookUpdated: 'GitLab records no event for a webhook',
  HookDeleted: 'GitLab records no event for a webhook',
  // feature flags
  FeatureFlagCreated: 'GitLab records no event for feature flags (only an audit event)',
  FeatureFlagUpdated: 'GitLab records no event for feature flags (only an audit event)',
  FeatureFlagDeleted: 'GitLab records no event for feature flags (only an audit event)',
  FeatureFlagScopeCreated: 'GitLab records no event for feature flags (only an audit event)',
  FeatureFlagScopeUpdated: 'GitLab records no event for feature flags (only an audit event)',
  FeatureFlagScopeDeleted: 'GitLab records no event for feature flags (only an audit event)',
  // scim (the membership and the user a provisioning makes are their own events)
  SamlProviderConfigured: 'GitLab records no event for group SAML settings',
  ScimTokenGenerated: 'GitLab records no event for a SCIM token',
  GroupSamlIdentityLinked: 'GitLab records no event for an identity',
  GroupSamlIdentityUidChanged: 'GitLab records no event for an identity',
  GroupSamlIdentityUnlinked: 'GitLab records no event for an identity',
  // epics and todos
  EpicUpdated: 'Epics::UpdateService records no event (only a state change does)',
  EpicDeleted: 'Issuable::DestroyService records no event for an epic (its events go with it)',
  MilestoneUpdated: 'Milestones::UpdateService records no event (only a state change does)',
  LabelCreated: 'GitLab records no event for labels',
  LabelUpdated: 'GitLab records no event for labels',
  LabelDeleted: 'GitLab records no event for labels',
  BoardCreated: 'GitLab records no event for issue boards',
  BoardUpdated: 'GitLab records no event for issue boards',
  BoardDeleted: 'GitLab records no event for issue boards',
  ListCreated: 'GitLab records no event for issue boards',
  ListMoved: 'GitLab records no event for issue boards',
  ListDeleted: 'GitLab records no event for issue boards',
  IssueLinkCreated: 'GitLab records no event for issue links (system notes only)',
  IssueLinkDeleted: 'GitLab records no event for issue links (system notes only)',
  TodoCreated: 'todos are personal, not activity',
  TodosMarkedDone: 'todos are personal, not activity',
  // merge requests
  MergeRequestUpdated: 'MergeRequests::UpdateService records no event (only a state change does)',
  MergeRequestDeleted: 'Issuable::DestroyService records no event (the merge request\'s events go with it)',
  MergeRequestVersionRecorded: 'the push that moved the source branch is the activity',
  MergeRequestMergeStatusChecked: 'a computed state, not an action',
  MergeRequestRebaseFailed: 'the outcome of a rebase, not an action of its own',
  MergeRequestMergeRefUpdated: 'a merge ref made for a check, no branch moved',
  MergeRequestTimeEstimateChanged: 'GitLab records a system note, not an event',
  MergeRequestTimeSpent: 'GitLab records a timelog and a system note, not an event',
  MergeRequestSubscribed: 'subscriptions are personal, not activity',
  MergeRequestUnsubscribed: 'subscriptions are personal, not activity',
  IssueUpdated: 'Issues::UpdateService records no event (only a state change does)',
  IssueMoved: 'Issues::MoveService records the closing (IssueClosed) and the new issue\'s creation',
  IssueDeleted: 'Issuable::DestroyService records no event (the issue\'s events go with it)',
  IssueTimeEstimateChanged: 'GitLab records a system note, not an event',
  IssueTimeSpent: 'GitLab records a timelog and a system note, not an event',
  IssueSubscribed: 'subscriptions are personal, not activity',
  IssueUnsubscribed: 'subscriptions are personal, not activity',
  IssueAddedToEpic: 'EpicIssues::CreateService records no event (system notes only)',
  IssueEpicPositionChanged: 'EpicIssues::UpdateService records no event',
  IssueRemovedFromEpic: 'EpicIssues::DestroyService records no event (system notes only)',
  IssueEpicLinkPassedOn: 'Issues::MoveService passes the epic link on without an event',
  IssueEpicLinkInherited: 'Issues::MoveService passes the epic link on without an event',
  // notes and award emoji
  NoteConvertedToDiscussion: 'a reply turned a note into a discussion: the reply is the activity',
  NoteEdited: 'Notes::UpdateService records no event',
  NoteCopied: 'Issues::MoveService copies a note without an event (Notes::CopyService: no `commented on`)',
  NoteDeleted: 'Notes::DestroyService records no event',
  NotesResolved: 'GitLab records no event for resolving a discussion',
  NotesUnresolved: 'GitLab records no event for unresolving a discussion',
  AwardEmojiAwarded: 'GitLab records no event for award emoji',
  AwardEmojiRemoved: 'GitLab records no event for award emoji',
  // container registry
  ContainerRepositoryCreated: 'GitLab records no event for the container registry',
  ContainerRepositoryTagPushed: 'GitLab records no event for the container registry',
  ContainerRepositoryTagDeleted: 'GitLab records no event for the container registry',
  ContainerRepositoryCleanupScheduled: 'GitLab records no event for the container registry',
  ContainerRepositoryDeletionScheduled: 'GitLab records no event for the container registry',
  ContainerRepositoryDeleted: 'GitLab records no event for the container registry',
} satisfies { readonly [T in Exclude<KnownEventType, ActivityEventType>]: string };

// ───────────────────────────── Reading the mapping ─────────────────────────────

const entries = Object.entries(ACTIVITY) as [ActivityEventType, ActivityMapping<any>][];

export const isActivity = (type: string): type is ActivityEventType => Object.hasOwn(ACTIVITY, type);

/** The event types that are activity, optionally only those of an action and a target filter. */
export function activityTypes(filters: { action?: ActivityAction | undefined; targetType?: ActivityTargetFilter | undefined } = {}): ActivityEventType[] {
  return entries
    .filter(([, m]) => (filters.action === undefined || m.action === filters.action) && (filters.targetType === undefined || m.targetFilter === filters.targetType))
    .map(([type]) => type);
}

/** The event types whose author is the given index column. */
export const activityTypesAuthoredBy = (author: 'actor' | 'target') => entries.filter(([, m]) => m.author === author).map(([type]) => type);

/** Event types that are no activity when committed with the creation of their project or group, and those creations. */
export const activityTypesNotWithCreation = () =>
  entries.filter(([, m]) => m.notWithCreation).map(([type, m]) => ({ type, creations: m.notWithCreation! }));

/** The record of one event of an activity type (its data upcast to the current schema). */
export function activityRecord(type: ActivityEventType, data: unknown): ActivityRecord {
  return (ACTIVITY[type] as ActivityMapping<unknown>).record(data);
}
