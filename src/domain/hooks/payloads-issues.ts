import { formatTimeTracking } from '../time-tracking.js';
import { issuableData, labelHookAttrs, type IssuableChanges, type IssuableFacts } from './payloads-issuables.js';
import { absoluteImageUrls, sidekiqTime, userHookAttrs, type ProjectFacts, type UserFacts } from './payloads.js';

/**
 * The "Issue Hook" (GitLab 12.10's Issues::BaseService#hook_data over
 * Gitlab::HookData::IssuableBuilder and IssueBuilder, with EE's `weight`): the issuable's hook
 * data with `object_attributes.action`. Sent under `issue_hooks`, or `confidential_issue_hooks`
 * for a confidential issue (Issues::BaseService#execute_hooks).
 */

export interface IssueFacts extends IssuableFacts {
  readonly id: number;
  readonly iid: number;
  readonly projectId: number;
  readonly authorId: number;
  readonly assigneeIds: readonly number[];
  readonly closedAt: Date | null;
  readonly confidential: boolean;
  readonly description: string | null;
  readonly discussionLocked: boolean | null;
  /** `YYYY-MM-DD`. */
  readonly dueDate: string | null;
  readonly milestoneId: number | null;
  readonly movedToId: number | null;
  readonly relativePosition: number | null;
  readonly state: 'opened' | 'closed';
  readonly timeEstimate: number;
  readonly totalTimeSpent: number;
  readonly title: string;
  readonly weight: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly project: ProjectFacts;
}

export type IssueAction = 'open' | 'close' | 'reopen' | 'update';

/** Issue's state_id column (12.10: opened 1, closed 2). */
const STATE_ID = { opened: 1, closed: 2 } as const;

/** Gitlab::UrlBuilder's issue URL. */
export const issueUrl = (issue: Pick<IssueFacts, 'iid' | 'project'>) => `${issue.project.webUrl}/-/issues/${issue.iid}`;

/**
 * Issue#hook_attrs: SAFE_HOOK_ATTRIBUTES in their order (a merged key keeps its place:
 * `assignee_id`, `description`), then the builder's own keys.
 */
export function issueHookAttrs(issue: IssueFacts) {
  return {
    assignee_id: issue.assigneeIds[0] ?? null,
    author_id: issue.authorId,
    closed_at: sidekiqTime(issue.closedAt),
    confidential: issue.confidential,
    created_at: sidekiqTime(issue.createdAt),
    description: absoluteImageUrls(issue.description, issue.project.instanceUrl),
    discussion_locked: issue.discussionLocked,
    due_date: issue.dueDate,
    id: issue.id,
    iid: issue.iid,
    last_edited_at: null,
    last_edited_by_id: null,
    milestone_id: issue.milestoneId,
    moved_to_id: issue.movedToId,
    duplicated_to_id: null,
    project_id: issue.projectId,
    relative_position: issue.relativePosition,
    state_id: STATE_ID[issue.state],
    time_estimate: issue.timeEstimate,
    title: issue.title,
    updated_at: sidekiqTime(issue.updatedAt),
    updated_by_id: null,
    weight: issue.weight,
    url: issueUrl(issue),
    total_time_spent: issue.totalTimeSpent,
    human_total_time_spent: formatTimeTracking(issue.totalTimeSpent),
    human_time_estimate: formatTimeTracking(issue.timeEstimate),
    assignee_ids: [...issue.assigneeIds],
    state: issue.state,
  };
}

/** `issue.to_hook_data(user)` with `object_attributes.action`. */
export const issueData = (issue: IssueFacts, user: UserFacts, action: IssueAction, changes: IssuableChanges = {}) =>
  issuableData('issue', issue, issue.project, user, { ...issueHookAttrs(issue), action }, changes);

const change = (previous: unknown, current: unknown) => ({ previous, current });

/**
 * The `changes` of the hooks GitLab 12.10 sends with no old associations (Issues::CreateService,
 * CloseService, ReopenService call `execute_hooks(issue, action)`): Issuable#to_hook_data takes the
 * record's last save (`previous_changes`) and, comparing with an empty `old_associations`, the
 * labels and assignees as added from none and `total_time_spent` from nil; IssuableBuilder keeps
 * the safe keys, in SAFE_HOOK_ATTRIBUTES' then SAFE_HOOK_RELATIONS' order. The last save is the
 * creation (every attribute set away from its column's default), the reopening (`state_id`,
 * `closed_at`), or, after a close, CloseService's `issue.update(closed_by:)` (only `updated_at` is safe).
 */
export function issueActionChanges(action: 'open' | 'close' | 'reopen', issue: IssueFacts, before: IssueFacts | undefined): IssuableChanges {
  const out: Record<string, { previous: unknown; current: unknown }> = {};
  const at = sidekiqTime(issue.updatedAt);
  if (action === 'open') {
    out.author_id = change(null, issue.authorId);
    if (issue.confidential) out.confidential = change(false, true);
    out.created_at = change(null, sidekiqTime(issue.createdAt));
    if (issue.description !== null) out.description = change(null, issue.description);
    if (issue.discussionLocked !== null) out.discussion_locked = change(null, issue.discussionLocked);
    if (issue.dueDate !== null) out.due_date = change(null, issue.dueDate);
    out.id = change(null, issue.id);
    out.iid = change(null, issue.iid);
    if (issue.milestoneId !== null) out.milestone_id = change(null, issue.milestoneId);
    out.project_id = change(null, issue.projectId);
    if (issue.relativePosition !== null) out.relative_position = change(null, issue.relativePosition);
    out.title = change(null, issue.title);
    out.updated_at = change(null, at);
    if (issue.weight !== null) out.weight = change(null, issue.weight);
  } else if (action === 'reopen') {
    out.closed_at = change(sidekiqTime(before?.closedAt ?? null), null);
    out.state_id = change(STATE_ID.closed, STATE_ID.opened);
    out.updated_at = change(before ? sidekiqTime(before.updatedAt) : at, at);
  } else {
    // The close's save and then closed_by's, both now.
    out.updated_at = change(at, at);
  }
  if (issue.assignees.length > 0) out.assignees = change([], issue.assignees.map(userHookAttrs));
  if (issue.labels.length > 0) out.labels = change([], issue.labels.map(labelHookAttrs));
  out.total_time_spent = change(null, issue.totalTimeSpent);
  return out;
}
