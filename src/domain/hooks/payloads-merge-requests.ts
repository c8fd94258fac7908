import { isWorkInProgress } from '../issuable-text.js';
import { formatTimeTracking } from '../time-tracking.js';
import { commitHookAttrs, projectHookAttrs, sidekiqTime, userHookAttrs, type CommitFacts, type ProjectFacts, type UserFacts } from './payloads.js';

/**
 * The "Merge Request Hook" (GitLab 12.10's MergeRequests::BaseService#hook_data over
 * Gitlab::HookData::IssuableBuilder and MergeRequestBuilder): the issuable's hook data with
 * `object_attributes.action`. The times went through Sidekiq's JSON as GitLab's do
 * (`2013-12-03 17:23:34 UTC`).
 */

export interface LabelFacts {
  readonly id: number;
  readonly title: string;
  readonly color: string;
  readonly projectId: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly description: string | null;
}

/** Label#hook_attrs (12.10). */
export const labelHookAttrs = (l: LabelFacts) => ({
  id: l.id,
  title: l.title,
  color: l.color,
  project_id: l.projectId,
  created_at: sidekiqTime(l.createdAt),
  updated_at: sidekiqTime(l.updatedAt),
  template: false,
  description: l.description,
  type: 'ProjectLabel',
  group_id: null,
});

export interface MergeRequestFacts {
  readonly id: number;
  readonly iid: number;
  readonly authorId: number;
  readonly assigneeIds: readonly number[];
  readonly title: string;
  readonly description: string | null;
  readonly state: string;
  readonly mergeStatus: string;
  readonly mergeCommitSha: string | null;
  readonly mergeUserId: number | null;
  readonly milestoneId: number | null;
  readonly sourceBranch: string;
  readonly sourceProjectId: number;
  readonly targetBranch: string;
  readonly targetProjectId: number;
  readonly timeEstimate: number;
  readonly totalTimeSpent: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly source: ProjectFacts | null;
  readonly target: ProjectFacts;
  readonly lastCommit: CommitFacts | null;
  readonly labels: readonly LabelFacts[];
  readonly assignees: readonly UserFacts[];
}

/** MergeRequest's state_id column (12.10: opened 1, closed 2, merged 3, locked 4). */
const STATE_ID: Readonly<Record<string, number>> = { opened: 1, closed: 2, merged: 3, locked: 4 };

/** MergeRequest#hook_attrs: SAFE_HOOK_ATTRIBUTES in their order, then the builder's own keys. */
export function mergeRequestHookAttrs(mr: MergeRequestFacts) {
  return {
    assignee_id: mr.assigneeIds[0] ?? null,
    author_id: mr.authorId,
    created_at: sidekiqTime(mr.createdAt),
    description: mr.description,
    head_pipeline_id: null,
    id: mr.id,
    iid: mr.iid,
    last_edited_at: null,
    last_edited_by_id: null,
    merge_commit_sha: mr.mergeCommitSha,
    merge_error: null,
    merge_params: { force_remove_source_branch: '0' },
    merge_status: mr.mergeStatus,
    merge_user_id: mr.mergeUserId,
    merge_when_pipeline_succeeds: false,
    milestone_id: mr.milestoneId,
    source_branch: mr.sourceBranch,
    source_project_id: mr.sourceProjectId,
    state_id: STATE_ID[mr.state] ?? 1,
    target_branch: mr.targetBranch,
    target_project_id: mr.targetProjectId,
    time_estimate: mr.timeEstimate,
    title: mr.title,
    updated_at: sidekiqTime(mr.updatedAt),
    updated_by_id: null,
    url: `${mr.target.webUrl}/merge_requests/${mr.iid}`,
    source: mr.source ? projectHookAttrs(mr.source) : null,
    target: projectHookAttrs(mr.target),
    last_commit: mr.lastCommit ? lastCommitAttrs(mr.lastCommit, mr.target.webUrl) : null,
    work_in_progress: isWorkInProgress(mr.title),
    total_time_spent: mr.totalTimeSpent,
    human_total_time_spent: formatTimeTracking(mr.totalTimeSpent),
    human_time_estimate: formatTimeTracking(mr.timeEstimate),
    assignee_ids: [...mr.assigneeIds],
    state: mr.state,
  };
}

/** `diff_head_commit.hook_attrs`: without the changed files. */
export function lastCommitAttrs(c: CommitFacts, webUrl: string) {
  const { added: _a, modified: _m, removed: _r, ...rest } = commitHookAttrs(c, webUrl);
  return rest;
}

/** The `changes` of an update: each changed attribute's previous and current value (IssuableBuilder#final_changes). */
export type MergeRequestChanges = Readonly<Record<string, { readonly previous: unknown; readonly current: unknown }>>;

/** `merge_request.to_hook_data(user)` with `object_attributes.action` (open, close, reopen, merge, update). */
export function mergeRequestData(mr: MergeRequestFacts, user: UserFacts, action: 'open' | 'close' | 'reopen' | 'merge' | 'update', changes: MergeRequestChanges = {}) {
  const data: Record<string, unknown> = {
    object_kind: 'merge_request',
    user: userHookAttrs(user),
    project: projectHookAttrs(mr.target),
    object_attributes: { ...mergeRequestHookAttrs(mr), action },
    labels: mr.labels.map(labelHookAttrs),
    changes,
    repository: { name: mr.target.name, url: mr.target.sshUrl, description: mr.target.description, homepage: mr.target.webUrl },
  };
  if (mr.assignees.length > 0) data.assignees = mr.assignees.map(userHookAttrs);
  return data;
}

/** Label changes as final_changes writes them: the labels' hook attributes before and after. */
export const labelChanges = (previous: readonly LabelFacts[], current: readonly LabelFacts[]) => ({ previous: previous.map(labelHookAttrs), current: current.map(labelHookAttrs) });
