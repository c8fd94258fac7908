import { isWorkInProgress } from '../issuable-text.js';
import { formatTimeTracking } from '../time-tracking.js';
import { issuableData, type IssuableChanges, type IssuableFacts } from './payloads-issuables.js';
import { absoluteImageUrls, commitHookAttrs, projectHookAttrs, sidekiqTime, type CommitFacts, type ProjectFacts, type UserFacts } from './payloads.js';

/**
 * The "Merge Request Hook" (GitLab 12.10's MergeRequests::BaseService#hook_data over
 * Gitlab::HookData::IssuableBuilder and MergeRequestBuilder): the issuable's hook data with
 * `object_attributes.action`. The times went through Sidekiq's JSON as GitLab's do
 * (`2013-12-03 17:23:34 UTC`).
 */

export interface MergeRequestFacts extends IssuableFacts {
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
}

/** MergeRequest's state_id column (12.10: opened 1, closed 2, merged 3, locked 4). */
const STATE_ID: Readonly<Record<string, number>> = { opened: 1, closed: 2, merged: 3, locked: 4 };

/** Gitlab::UrlBuilder's merge request URL (the API's `web_url` too). */
export const mergeRequestUrl = (mr: Pick<MergeRequestFacts, 'iid' | 'target'>) => `${mr.target.webUrl}/-/merge_requests/${mr.iid}`;

/** MergeRequest#hook_attrs: SAFE_HOOK_ATTRIBUTES in their order, then the builder's own keys. */
export function mergeRequestHookAttrs(mr: MergeRequestFacts) {
  return {
    assignee_id: mr.assigneeIds[0] ?? null,
    author_id: mr.authorId,
    created_at: sidekiqTime(mr.createdAt),
    description: absoluteImageUrls(mr.description, mr.target.instanceUrl),
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
    url: mergeRequestUrl(mr),
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

/** `merge_request.to_hook_data(user)` with `object_attributes.action` (open, close, reopen, merge, update). */
export const mergeRequestData = (mr: MergeRequestFacts, user: UserFacts, action: 'open' | 'close' | 'reopen' | 'merge' | 'update', changes: IssuableChanges = {}) =>
  issuableData('merge_request', mr, mr.target, user, { ...mergeRequestHookAttrs(mr), action }, changes);
