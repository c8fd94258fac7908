import type { KnownEvent } from '../aggregates.js';
import type { CommitDetail } from '../repository/decider.js';
import { protectedRefMatches } from '../repository/push-access.js';
import type { Properties } from './catalogue.js';
import type { ChatMessage, MessageFacts } from './chat-message.js';
import { issueMessage } from './issue-message.js';

export type { ChatMessage, MessageFacts } from './chat-message.js';

/**
 * What makes an integration deliver: one row per event type of the log, the one place later
 * areas add to. GitLab 12 runs a project's services for push, tag push, issue, note, merge
 * request, pipeline, job and wiki page hooks (Project#execute_services); of the event types
 * forgelog appends today, the pushes (the repository's branch events) and the merge requests'
 * open, close, reopen and merge are. A
 * row names the integration flag that subscribes to it, the project it happens in and the
 * chat message it makes (null: none, as GitLab sends nothing for an issue's `update`).
 *
 *   pushed: { flag: 'push_events', projectId: (d) => d.project_id, message: (d, facts) => ({ … }) },
 */

// ───────────────────────────── The table ─────────────────────────────


/** The flags GitLab's chat services subscribe with (Service's `*_events` columns that hooks fire). */
export type DeliveryFlag =
  | 'push_events'
  | 'tag_push_events'
  | 'issues_events'
  | 'confidential_issues_events'
  | 'merge_requests_events'
  | 'note_events'
  | 'confidential_note_events'
  | 'pipeline_events'
  | 'wiki_page_events';

export interface DeliveryTrigger<Data> {
  readonly flag: DeliveryFlag;
  /** The flag instead when the event's issue (an issue's, or a note's noteable) is confidential. */
  readonly confidential?: { readonly flag: DeliveryFlag; readonly issueId: (data: Data) => number | null };
  readonly projectId: (data: Data) => number;
  readonly message: (data: Data, facts: MessageFacts) => ChatMessage | null;
}

/** A delivery table over an event union: `{ [type]?: trigger of that type's data }`. */
export type DeliveryTriggers<E extends { readonly type: string; readonly data: unknown } = KnownEvent> = {
  readonly [T in E['type']]?: DeliveryTrigger<Extract<E, { type: T }>['data']>;
};

/**
 * Production: the pushes (GitLab: Git::BranchPushService → Project#execute_services(push_data,
 * :push_hooks), `push_events`) and the merge requests (MergeRequests::BaseService#execute_hooks
 * → Project#execute_services(hook_data, :merge_request_hooks), `merge_requests_events`) for
 * open, close, reopen and merge; an update sends nothing (ChatNotificationService#get_message
 * skips `action: update`), so MergeRequestUpdated has no row; likewise the issues' open, close
 * and reopen (`issues_events`, `confidential_issues_events` for a confidential issue) and user
 * notes (`note_events`, `confidential_note_events` on a confidential issue).
 */
export const DELIVERY_TRIGGERS = {
  BranchCreated: {
    flag: 'push_events',
    projectId: (d) => d.project_id,
    message: (d, facts) => pushMessage({ ref: d.branch, before: BLANK_SHA, after: d.new_sha, commits: d.commits, details: d.commit_details }, facts),
  },
  BranchUpdated: {
    flag: 'push_events',
    projectId: (d) => d.project_id,
    message: (d, facts) => pushMessage({ ref: d.branch, before: d.old_sha, after: d.new_sha, commits: d.commits, details: d.commit_details }, facts),
  },
  BranchDeleted: {
    flag: 'push_events',
    projectId: (d) => d.project_id,
    message: (d, facts) => pushMessage({ ref: d.branch, before: d.old_sha, after: BLANK_SHA, commits: [], details: [] }, facts),
  },
  MergeRequestOpened: {
    flag: 'merge_requests_events',
    projectId: (d) => d.project_id,
    message: (d, facts) => mergeRequestMessage({ iid: d.iid, title: d.title, state: 'opened' }, facts),
  },
  MergeRequestClosed: {
    flag: 'merge_requests_events',
    projectId: (d) => d.project_id,
    message: (d, facts) => mergeRequestMessage({ iid: d.iid, title: d.title, state: 'closed' }, facts),
  },
  // The hook data's `state` is the merge request's state after the transition: a reopened one is `opened`.
  MergeRequestReopened: {
    flag: 'merge_requests_events',
    projectId: (d) => d.project_id,
    message: (d, facts) => mergeRequestMessage({ iid: d.iid, title: d.title, state: 'opened' }, facts),
  },
  MergeRequestMerged: {
    flag: 'merge_requests_events',
    projectId: (d) => d.project_id,
    message: (d, facts) => mergeRequestMessage({ iid: d.iid, title: d.title, state: 'merged' }, facts),
  },
  // GitLab: Issues::BaseService#execute_hooks → Project#execute_services(hook_data, :issue_hooks or :confidential_issue_hooks).
  IssueOpened: {
    flag: 'issues_events',
    confidential: { flag: 'confidential_issues_events', issueId: (d) => d.id },
    projectId: (d) => d.project_id,
    message: (d, facts) => issueMessage({ iid: d.iid, title: d.title, description: d.description, action: 'open' }, facts),
  },
  IssueClosed: {
    flag: 'issues_events',
    confidential: { flag: 'confidential_issues_events', issueId: (d) => d.id },
    projectId: (d) => d.project_id,
    message: (d, facts) => issueMessage({ iid: d.iid, title: d.title, description: null, action: 'close' }, facts),
  },
  IssueReopened: {
    flag: 'issues_events',
    confidential: { flag: 'confidential_issues_events', issueId: (d) => d.id },
    projectId: (d) => d.project_id,
    message: (d, facts) => issueMessage({ iid: d.iid, title: d.title, description: null, action: 'reopen' }, facts),
  },
  // GitLab: Notes::PostProcessService#execute_note_hooks → Project#execute_services(hooks_data, :note_hooks),
  // :confidential_note_hooks for a note on a confidential issue (Note#confidential?).
  // An epic's note is a group's: no project, no project service (project id 0 matches none).
  NoteAdded: {
    flag: 'note_events',
    confidential: { flag: 'confidential_note_events', issueId: (d) => (d.noteable_type === 'Issue' ? d.noteable_id : null) },
    projectId: (d) => d.project_id ?? 0,
    message: (d, facts) => noteMessage(d, facts),
  },
} satisfies DeliveryTriggers;

// ───────────────────────────── Who is notified ─────────────────────────────

/** What the branch rule needs to know of the project. */
export interface BranchFacts {
  readonly defaultBranch: string | null;
  /** Protected branch names and wildcards (`release/*`). */
  readonly protectedBranches: readonly string[];
}

/** ProtectedBranch.protected?: a name or a wildcard matches the branch (the one matcher, src/domain/repository/push-access.ts). */
export const isProtectedBranch = (branch: string, patterns: readonly string[]) => patterns.some((p) => protectedRefMatches(p, branch));

/**
 * ChatNotificationService's filters (12.x): `notify_for_ref?` — a tag always, a branch by
 * `branches_to_be_notified` (all, default, protected, default_and_protected; anything else
 * none) — and, for a pipeline, `notify_for_pipeline?`: failed always, success unless
 * `notify_only_broken_pipelines`, any other status never.
 */
export function chatWouldNotify(message: ChatMessage, properties: Properties, facts: BranchFacts): boolean {
  if (message.ref && !message.ref.tag) {
    const branch = message.ref.name;
    const isDefault = branch === facts.defaultBranch;
    const isProtected = isProtectedBranch(branch, facts.protectedBranches);
    const choice = properties.branches_to_be_notified ?? 'all';
    const ok =
      choice === 'all' ? true : choice === 'default' ? isDefault : choice === 'protected' ? isProtected : choice === 'default_and_protected' ? isDefault || isProtected : false;
    if (!ok) return false;
  }
  if (message.pipelineStatus !== undefined) {
    if (message.pipelineStatus === 'failed') return true;
    if (message.pipelineStatus === 'success') return properties.notify_only_broken_pipelines !== true;
    return false;
  }
  return true;
}

// ───────────────────────────── Pushes ─────────────────────────────

/** Gitlab::Git::BLANK_SHA: the push data's `before` of a new ref, `after` of a removed one. */
export const BLANK_SHA = '0'.repeat(40);

/** Gitlab::DataBuilder::Push: the push data carries the latest 20 commits, oldest first. */
const PUSH_DATA_COMMITS = 20;

export interface PushMove {
  readonly ref: string;
  readonly before: string;
  readonly after: string;
  /** Newest first, as the branch events record them. */
  readonly commits: readonly string[];
  /** One per commit, same order; null when the event did not record them (schema version 1). */
  readonly details: readonly CommitDetail[] | null;
}

/**
 * GitLab 12's ChatMessage::PushMessage for a branch: the summary "<user> pushed new branch
 * <ref link> to <project link>" / "<user> removed branch <ref> from <project link>" / "<user>
 * pushed to branch <ref link> of <project link> (<compare link>)"; for a move, the commits as
 * its attachment ("[<sha 8>](<commit url>): <message> - <author>", blank line between, color
 * #345), none for a new or removed branch; Microsoft Teams' activity the short summary, "in
 * <project link>", the compare link and the avatar. The user is the push data's `user_name`
 * (the full name). Links are Markdown; the renderers turn them into each chat's.
 */
export function pushMessage(move: PushMove, facts: MessageFacts): ChatMessage {
  const web = facts.project.webUrl;
  const projectLink = `[${facts.project.pathWithNamespace}](${web})`;
  const refLink = `[${move.ref}](${web}/commits/${move.ref})`;
  const compareLink = `[Compare changes](${web}/compare/${move.before}...${move.after})`;
  const user = facts.user?.name ?? '';
  const created = move.before === BLANK_SHA;
  const removed = move.after === BLANK_SHA;
  const [action, ref, target] = created
    ? ['pushed new', refLink, `to ${projectLink}`]
    : removed
      ? ['removed', move.ref, `from ${projectLink}`]
      : ['pushed to', refLink, `of ${projectLink} (${compareLink})`];
  const short = `${user} ${action} branch ${ref}`;
  const message: ChatMessage = {
    projectName: facts.project.pathWithNamespace,
    userName: user,
    userAvatar: facts.user?.avatarUrl ?? null,
    summary: `${short} ${target}`,
    activity: { title: short, subtitle: `in ${projectLink}`, text: compareLink, image: facts.user?.avatarUrl ?? '' },
    ref: { name: move.ref, tag: false },
  };
  if (created || removed) return message;
  const listed = move.commits
    .map((sha, i) => ({ sha, detail: move.details?.[i] }))
    .slice(0, PUSH_DATA_COMMITS)
    .reverse();
  const text = listed.map(({ sha, detail }) => `[${sha.slice(0, 8)}](${web}/commit/${sha}): ${detail?.message ?? ''} - ${detail?.author_name ?? ''}`).join('\n\n');
  return { ...message, details: { text, color: '#345' } };
}

// ───────────────────────────── Merge requests ─────────────────────────────

export interface MergeRequestMove {
  readonly iid: number;
  readonly title: string;
  /** The hook data's `object_attributes.state` after the action. */
  readonly state: 'opened' | 'closed' | 'merged';
}

/**
 * GitLab 12's ChatMessage::MergeMessage: the summary "<user> <state> [!<iid> *<title's first
 * line>*](<project>/merge_requests/<iid>) in [<path>](<project>)", no attachment; Microsoft
 * Teams' activity "Merge Request <state> by <user>", "in <project link>", the merge request's
 * link and the avatar. The user is BaseMessage's `user_combined_name`: the hook data carries
 * `user: {name, username}`, so "<full name> (<username>)" (the username alone without a name).
 */
export function mergeRequestMessage(move: MergeRequestMove, facts: MessageFacts): ChatMessage {
  const web = facts.project.webUrl;
  const projectLink = `[${facts.project.pathWithNamespace}](${web})`;
  // format_title: '*' + title.lines.first.chomp + '*' (Ruby's lines keep the "\n", chomp drops it and a "\r" before it).
  const firstLine = move.title.split('\n')[0]!.replace(/\r$/, '');
  const link = `[!${move.iid} *${firstLine}*](${web}/merge_requests/${move.iid})`;
  const user = facts.user ? (facts.user.name !== '' ? `${facts.user.name} (${facts.user.username})` : facts.user.username) : '';
  return {
    projectName: facts.project.pathWithNamespace,
    // BaseMessage#user_name is the hook's `user.username` (Discord's embed author).
    userName: facts.user?.username ?? '',
    userAvatar: facts.user?.avatarUrl ?? null,
    summary: `${user} ${move.state} ${link} in ${projectLink}`,
    activity: { title: `Merge Request ${move.state} by ${user}`, subtitle: `in ${projectLink}`, text: link, image: facts.user?.avatarUrl ?? '' },
  };
}

// ───────────────────────────── Notes ─────────────────────────────

export interface NoteMove {
  readonly id: number;
  readonly body: string;
  readonly noteable_type: string;
  readonly noteable_id?: number | null;
  readonly noteable_iid: number | null;
  readonly commit_id: string | null;
  readonly noteable_title: string;
}

/**
 * GitLab 12's ChatMessage::NoteMessage: "<user> [commented on merge request !<iid>](<note url>)
 * in [<path>](<project>): *<title's first line>*", the note as the attachment (color #345);
 * Microsoft Teams' activity "<user> [commented on …](…)", "in <project link>", the title and the
 * avatar. A commit's target is "commit <sha 8>" and its title its message, an issue's "issue
 * #<iid>", a snippet's "snippet $<id>"; an epic's note makes none (no project).
 */
export function noteMessage(note: NoteMove, facts: MessageFacts): ChatMessage | null {
  const web = facts.project.webUrl;
  const [target, url] =
    note.noteable_type === 'MergeRequest'
      ? [`merge request !${note.noteable_iid}`, `${web}/-/merge_requests/${note.noteable_iid}#note_${note.id}`]
      : note.noteable_type === 'Commit'
        ? [`commit ${note.commit_id!.slice(0, 8)}`, `${web}/-/commit/${note.commit_id}#note_${note.id}`]
        : note.noteable_type === 'Issue'
          ? [`issue #${note.noteable_iid}`, `${web}/-/issues/${note.noteable_iid}#note_${note.id}`]
          : note.noteable_type === 'Snippet'
            ? [`snippet $${note.noteable_id}`, `${web}/-/snippets/${note.noteable_id}#note_${note.id}`]
            : [null, null];
  if (target === null) return null;
  const projectLink = `[${facts.project.pathWithNamespace}](${web})`;
  const title = note.noteable_title.split('\n')[0]!.replace(/\r$/, '');
  const user = facts.user ? (facts.user.name !== '' ? `${facts.user.name} (${facts.user.username})` : facts.user.username) : '';
  const link = `[commented on ${target}](${url})`;
  return {
    projectName: facts.project.pathWithNamespace,
    userName: facts.user?.username ?? '',
    userAvatar: facts.user?.avatarUrl ?? null,
    summary: `${user} ${link} in ${projectLink}: *${title}*`,
    details: { text: note.body, color: '#345' },
    activity: { title: `${user} ${link}`, subtitle: `in ${projectLink}`, text: title, image: facts.user?.avatarUrl ?? '' },
  };
}
