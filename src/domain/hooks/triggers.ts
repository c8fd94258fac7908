import type { DataOf, KnownEventType } from '../aggregates.js';
import { groupStreamId } from '../groups/decider.js';
import { BLANK_SHA } from '../integrations/deliveries.js';
import { membersStreamId } from '../members.js';
import { projectStreamId } from '../projects/events.js';
import { userStreamId } from '../users.js';
import type { HookFacts, HookMessage } from './facts.js';
import { issuableChanges, type IssuableChanges } from './payloads-issuables.js';
import { mergeRequestData, type MergeRequestFacts } from './payloads-merge-requests.js';
import {
  deployKeyOf,
  type KeySubject,
  groupEventData,
  groupMemberEventData,
  groupOf,
  membershipOf,
  projectEventData,
  projectMemberEventData,
  projectOf,
  keyEventData,
  userEventData,
  userOf,
  userSshKeyOf,
} from './payloads-system.js';
import { deployKeyStreamId } from '../deploy-keys.js';
import { userSshKeyStreamId } from '../user-ssh-keys.js';
import { issueActionMessage, issueMessage, issueUpdateChanges, noteMessage } from './triggers-issues.js';
import { pushData, repositoryUpdateData } from './payloads.js';

/**
 * What makes a webhook deliver: one row per event type of the log, each a builder of the
 * messages GitLab 12.10 sends for it. A message names its hook scope (`push_hooks` …, or
 * `system_hooks` for system events), the project whose hooks and whose groups' hooks hear it
 * (null: system hooks only), and its payload. The reactor (src/commands/hook-deliveries.ts)
 * picks the hooks subscribed to the scope; a new kind of hook event is one row here and one
 * payload builder (docs/webhooks.md, "Adding an event").
 */

export type { HookFacts, HookMessage } from './facts.js';

export type HookTrigger<Data> = (data: Data, facts: HookFacts) => Promise<readonly HookMessage[]>;
export type HookTriggers = { readonly [T in KnownEventType]?: HookTrigger<DataOf<T>> };

// ───────────────────────────── Pushes ─────────────────────────────

interface RefMove {
  readonly projectId: number;
  readonly kind: 'push' | 'tag_push';
  readonly name: string;
  readonly before: string;
  readonly after: string;
  readonly checkoutSha: string | null;
  readonly message: string | null;
  /** Newest first, as the events record them. */
  readonly commits: readonly string[];
  readonly total: number;
}

/**
 * A ref's move: push (or tag push) data to the project's hooks and the system hooks with the
 * scope, and `repository_update` to the system hooks (PostReceive's after_project_changes_hooks).
 */
async function refMoved(move: RefMove, facts: HookFacts): Promise<HookMessage[]> {
  // GitLab: a fork's copied refs are no push (ForkService and Project#after_import run no post-receive).
  if (move.before === BLANK_SHA && (await facts.committedWith('ProjectForkLinked', move.projectId))) return [];
  const [project, user] = [await facts.project(move.projectId), facts.actor];
  if (!project || !user) return [];
  const ref = `refs/${move.kind === 'push' ? 'heads' : 'tags'}/${move.name}`;
  const commits = await facts.commits(move.projectId, [...move.commits.slice(0, 20)].reverse());
  const payload = pushData({ kind: move.kind, before: move.before, after: move.after, ref, checkoutSha: move.checkoutSha, message: move.message, user, project, commits, totalCommitsCount: move.total });
  const name = move.kind === 'push' ? 'push_hooks' : 'tag_push_hooks';
  return [
    { name, projectId: move.projectId, ...(move.kind === 'push' ? { branch: move.name } : {}), payload },
    { name: 'repository_update_hooks', projectId: move.projectId, payload: repositoryUpdateData(project, user, { before: move.before, after: move.after, ref }) },
  ];
}

// ───────────────────────────── Merge requests ─────────────────────────────

type Action = 'open' | 'close' | 'reopen' | 'merge' | 'update';

async function mergeRequestMessage(id: number, action: Action, facts: HookFacts, changes?: (mr: MergeRequestFacts) => Promise<IssuableChanges>): Promise<HookMessage[]> {
  const mr = await facts.mergeRequest(id);
  if (!mr || !facts.actor) return [];
  return [{ name: 'merge_request_hooks', projectId: mr.targetProjectId, payload: mergeRequestData(mr, facts.actor, action, changes ? await changes(mr) : {}) }];
}

/** What an update changed: the merge request just before it against after it (IssuableBuilder#final_changes). */
async function updateChanges(d: DataOf<'MergeRequestUpdated'>, mr: MergeRequestFacts, facts: HookFacts): Promise<IssuableChanges> {
  const before = await facts.mergeRequest(d.id, true);
  if (!before) return {};
  return issuableChanges(d.changes, before, mr, {
    title: (m) => m.title,
    description: (m) => m.description,
    target_branch: (m) => m.targetBranch,
    milestone_id: (m) => m.milestoneId,
  });
}

// ───────────────────────────── System events ─────────────────────────────

const system = (payload: unknown): HookMessage[] => [{ name: 'system_hooks', projectId: null, payload }];

async function projectEvent(id: number, event: string, facts: HookFacts, options: { before?: boolean; oldPath?: string } = {}) {
  const project = projectOf(await facts.history(projectStreamId(id), options.before));
  return project ? system(projectEventData(event, project, await facts.owner(project.namespaceId), options.oldPath)) : [];
}

async function userEvent(id: number, event: string, facts: HookFacts, before = false, oldUsername?: string) {
  const user = userOf(await facts.history(userStreamId(id), before));
  return user ? system(userEventData(event, user, oldUsername)) : [];
}

/** A deploy key's creation or destruction (SystemHooksService for a Key), as of the event (before it, for a destruction). */
async function deployKeyEvent(id: number, event: string, facts: HookFacts, before = false) {
  return keyEvent(deployKeyOf(await facts.history(deployKeyStreamId(id), before)), event, facts);
}

/** A user's SSH key's creation or destruction: `key_create`, `key_destroy` (the Key class's name). */
async function userSshKeyEvent(id: number, event: string, facts: HookFacts) {
  return keyEvent(userSshKeyOf(await facts.history(userSshKeyStreamId(id))), event, facts);
}

/** SystemHooksService#build_event_data for a Key: its owner's username when it has one (a removed user's as it was). */
async function keyEvent(key: KeySubject | undefined, event: string, facts: HookFacts) {
  if (!key) return [];
  const owner = key.userId === null ? undefined : userOf(await facts.history(userStreamId(key.userId)));
  return system(keyEventData(event, key, owner?.username));
}

type MemberData = Pick<DataOf<'MemberAdded'>, 'source_type' | 'source_id' | 'user_id'>;

/** A membership's change: the project's or group's and the user's state, and the membership's own dates. */
async function memberEvent(d: MemberData, verb: 'add' | 'update' | 'remove', facts: HookFacts): Promise<HookMessage[]> {
  const project = d.source_type === 'Project';
  const stream = membersStreamId({ type: d.source_type, id: d.source_id });
  const membership = membershipOf(await facts.history(stream, verb === 'remove'), d.user_id);
  const user = userOf(await facts.history(userStreamId(d.user_id)));
  if (!membership || !user) return [];
  if (project) {
    const p = projectOf(await facts.history(projectStreamId(d.source_id)));
    const event = { add: 'user_add_to_team', update: 'user_update_for_team', remove: 'user_remove_from_team' }[verb];
    return p ? system(projectMemberEventData(event, membership, p, user)) : [];
  }
  const g = groupOf(await facts.history(groupStreamId(d.source_id)));
  const event = { add: 'user_add_to_group', update: 'user_update_for_group', remove: 'user_remove_from_group' }[verb];
  return g ? system(groupMemberEventData(event, membership, g, user)) : [];
}

// ───────────────────────────── The table ─────────────────────────────

export const HOOK_TRIGGERS = {
  BranchCreated: (d, f) =>
    refMoved({ projectId: d.project_id, kind: 'push', name: d.branch, before: BLANK_SHA, after: d.new_sha, checkoutSha: d.new_sha, message: null, commits: d.commits, total: d.commit_count }, f),
  BranchUpdated: (d, f) =>
    refMoved({ projectId: d.project_id, kind: 'push', name: d.branch, before: d.old_sha, after: d.new_sha, checkoutSha: d.new_sha, message: null, commits: d.commits, total: d.commit_count }, f),
  BranchDeleted: (d, f) => refMoved({ projectId: d.project_id, kind: 'push', name: d.branch, before: d.old_sha, after: BLANK_SHA, checkoutSha: null, message: null, commits: [], total: 0 }, f),
  TagCreated: (d, f) =>
    refMoved({ projectId: d.project_id, kind: 'tag_push', name: d.tag, before: BLANK_SHA, after: d.target, checkoutSha: d.commit_sha, message: d.message, commits: [d.commit_sha], total: 1 }, f),
  TagDeleted: (d, f) => refMoved({ projectId: d.project_id, kind: 'tag_push', name: d.tag, before: d.old_sha, after: BLANK_SHA, checkoutSha: null, message: null, commits: [], total: 0 }, f),

  MergeRequestOpened: (d, f) => mergeRequestMessage(d.id, 'open', f),
  MergeRequestClosed: (d, f) => mergeRequestMessage(d.id, 'close', f),
  MergeRequestReopened: (d, f) => mergeRequestMessage(d.id, 'reopen', f),
  MergeRequestMerged: (d, f) => mergeRequestMessage(d.id, 'merge', f),
  MergeRequestUpdated: (d, f) => mergeRequestMessage(d.id, 'update', f, (mr) => updateChanges(d, mr, f)),

  IssueOpened: (d, f) => issueActionMessage(d.id, 'open', f),
  IssueClosed: (d, f) => issueActionMessage(d.id, 'close', f),
  IssueReopened: (d, f) => issueActionMessage(d.id, 'reopen', f),
  IssueUpdated: (d, f) => issueMessage(d.id, 'update', f, (issue) => issueUpdateChanges(d, issue, f)),

  NoteAdded: (d, f) => noteMessage(d, f),

  ProjectCreated: (d, f) => projectEvent(d.id, 'project_create', f),
  ProjectDeleted: (d, f) => projectEvent(d.id, 'project_destroy', f, { before: true }),
  // Projects::UpdateService#after_update: a new path is a rename, anything else an update.
  ProjectUpdated: async (d, f) => {
    // A first push setting the default branch is no update of the project's settings.
    if (Object.keys(d.changes).every((key) => key === 'default_branch')) return [];
    if (d.changes.path === undefined) return projectEvent(d.id, 'project_update', f);
    const before = projectOf(await f.history(projectStreamId(d.id), true));
    return projectEvent(d.id, 'project_rename', f, { oldPath: before?.pathWithNamespace ?? '' });
  },
  ProjectTransferred: (d, f) => projectEvent(d.id, 'project_transfer', f, { oldPath: d.previous_path_with_namespace }),

  UserCreated: (d, f) => userEvent(d.id, 'user_create', f),
  UserDeleted: (d, f) => userEvent(d.id, 'user_destroy', f, true),
  UserProfileUpdated: async (d, f) => {
    if (d.changes.username === undefined) return [];
    const before = userOf(await f.history(userStreamId(d.id), true));
    return userEvent(d.id, 'user_rename', f, false, before?.username ?? '');
  },

  GroupCreated: async (d, f) => {
    const group = groupOf(await f.history(groupStreamId(d.id)));
    return group ? system(groupEventData('group_create', group)) : [];
  },
  GroupDeleted: async (d, f) => {
    const group = groupOf(await f.history(groupStreamId(d.id), true));
    return group ? system(groupEventData('group_destroy', group)) : [];
  },
  GroupUpdated: async (d, f) => {
    if (d.changes.path === undefined) return [];
    const [before, after] = [groupOf(await f.history(groupStreamId(d.id), true)), groupOf(await f.history(groupStreamId(d.id)))];
    return before && after ? system(groupEventData('group_rename', after, before)) : [];
  },

  DeployKeyCreated: (d, f) => deployKeyEvent(d.id, 'deploykey_create', f),
  DeployKeyDeleted: (d, f) => deployKeyEvent(d.id, 'deploykey_destroy', f, true),
  UserSshKeyAdded: (d, f) => userSshKeyEvent(d.id, 'key_create', f),
  UserSshKeyRemoved: (d, f) => userSshKeyEvent(d.id, 'key_destroy', f),

  MemberAdded: (d, f) => memberEvent(d, 'add', f),
  AccessRequestApproved: (d, f) => memberEvent(d, 'add', f),
  MemberUpdated: (d, f) => memberEvent(d, 'update', f),
  MemberRemoved: (d, f) => memberEvent(d, 'remove', f),
} satisfies HookTriggers;
