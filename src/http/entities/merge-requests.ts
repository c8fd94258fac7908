import type { Config } from '../../config.js';
import { isWorkInProgress, taskCompletionStatus } from '../../domain/issuable-text.js';
import { formatTimeTracking } from '../../domain/time-tracking.js';
import type { MergeRequestView } from '../../projections/merge-requests/queries.js';
import type { MergeRequestRow } from '../../projections/merge-requests/tables.js';
import { toMilestone } from './milestones.js';
import { projectWebUrl } from './projects.js';
import { iso, toUserBasic } from './users.js';

/** Gitlab::UrlBuilder of a merge request: project_merge_request_url, by iid (under `/-/` since GitLab 12.8). */
export const mergeRequestWebUrl = (config: Config, pathWithNamespace: string, iid: number) => `${projectWebUrl(config, pathWithNamespace)}/-/merge_requests/${iid}`;

/** Entities::IssuableTimeStats and the time tracking endpoints' answer. */
export const toTimeStats = (row: Pick<MergeRequestRow, 'time_estimate' | 'total_time_spent'>) => ({
  time_estimate: row.time_estimate,
  total_time_spent: row.total_time_spent,
  human_time_estimate: formatTimeTracking(row.time_estimate),
  human_total_time_spent: formatTimeTracking(row.total_time_spent),
});

function user(view: MergeRequestView, id: number | null, config: Config) {
  const found = id === null ? undefined : view.users.get(id);
  return found ? toUserBasic(found, config) : null;
}

/** Entities::ProjectEntity: the fields every merge request entity starts with. */
const projectEntity = (row: MergeRequestRow) => ({
  id: row.id,
  iid: row.iid,
  project_id: row.project_id,
  title: row.title,
  description: row.description,
  state: row.state,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

/** Entities::MergeRequestSimple (`view=simple`). */
export function toMergeRequestSimple(view: MergeRequestView, config: Config) {
  return { ...projectEntity(view.row), web_url: mergeRequestWebUrl(config, view.pathWithNamespace, view.row.iid) };
}

/**
 * Entities::MergeRequestBasic (GitLab 12.x), the lists' record. user_notes_count, upvotes and
 * downvotes come with the view (src/projections/notes/, award-emoji/); no pipelines:
 * merge_when_pipeline_succeeds is false. `references` (12.6+) beside the older `reference`.
 * `allow_collaboration` and its older name are shown on merge requests from forks only.
 */
export function toMergeRequestBasic(view: MergeRequestView, config: Config) {
  const { row } = view;
  const short = `!${row.iid}`;
  const assignees = row.assignee_ids.map((id) => user(view, id, config)).filter((u) => u !== null);
  // ProjectEntity's object, the rest assigned onto it: V8 (Node 20) builds a literal that
  // starts with a spread and goes on with more fields at ~1.5 µs per field after the spread —
  // 80 µs for this one, 1.6 ms of CPU for a page of 20 (Object.assign: about 2 µs).
  return Object.assign(projectEntity(row), {
    merged_by: user(view, row.merged_by_id, config),
    merged_at: iso(row.merged_at),
    closed_by: user(view, row.closed_by_id, config),
    closed_at: iso(row.closed_at),
    target_branch: row.target_branch,
    source_branch: row.source_branch,
    user_notes_count: view.userNotesCount,
    upvotes: view.upvotes,
    downvotes: view.downvotes,
    author: user(view, row.author_id, config),
    assignees,
    assignee: assignees[0] ?? null,
    source_project_id: row.source_project_id,
    target_project_id: row.project_id,
    labels: view.labels.map((l) => l.title),
    work_in_progress: isWorkInProgress(row.title),
    milestone: view.milestone ? toMilestone(view.milestone, config, view.pathWithNamespace) : null,
    merge_when_pipeline_succeeds: false,
    merge_status: row.merge_status,
    sha: row.head_sha,
    merge_commit_sha: row.merge_commit_sha,
    squash_commit_sha: row.squash_commit_sha,
    discussion_locked: row.discussion_locked,
    should_remove_source_branch: null as boolean | null,
    force_remove_source_branch: row.force_remove_source_branch,
  }, row.source_project_id === row.project_id ? {} : { allow_collaboration: row.allow_collaboration, allow_maintainer_to_push: row.allow_collaboration }, {
    reference: short,
    references: { short, relative: short, full: `${view.pathWithNamespace}${short}` },
    web_url: mergeRequestWebUrl(config, view.pathWithNamespace, row.iid),
    time_stats: toTimeStats(row),
    squash: row.squash,
    task_completion_status: taskCompletionStatus(row.description),
    has_conflicts: row.merge_status === 'cannot_be_merged',
    blocking_discussions_resolved: true,
    approvals_before_merge: null as number | null,
  });
}

export interface MergeRequestDetail {
  readonly subscribed: boolean;
  /** GitLab's merge_status recheck of the single view: the status computed now when the stored one is unchecked. */
  readonly mergeStatus?: MergeRequestRow['merge_status'] | undefined;
  /** `include_diverged_commits_count=true`. */
  readonly divergedCommitsCount?: number | undefined;
  /** MergeRequest#can_be_merged_by?(current_user): `user.can_merge`. */
  readonly canMerge: boolean;
}

/** Entities::MergeRequest (GitLab 12.x): the single view. No pipelines: their fields are null. */
export function toMergeRequest(view: MergeRequestView, config: Config, detail: MergeRequestDetail) {
  // The basic entity's object, its fields changed and more added in place: `{ ...basic, … }`
  // would cost ~1.5 µs per field after the spread (see toMergeRequestBasic). The keys keep
  // their order: a changed one stays where the basic entity has it, as a spread's would.
  const out: ReturnType<typeof toMergeRequestBasic> & Record<string, unknown> = toMergeRequestBasic(view, config);
  const mergeStatus = detail.mergeStatus ?? view.row.merge_status;
  const { row } = view;
  out.merge_status = mergeStatus;
  out.has_conflicts = mergeStatus === 'cannot_be_merged';
  out.subscribed = detail.subscribed;
  out.changes_count = String(row.changes_count);
  out.latest_build_started_at = null;
  out.latest_build_finished_at = null;
  out.first_deployed_to_production_at = null;
  out.pipeline = null;
  out.head_pipeline = null;
  out.diff_refs = { base_sha: row.base_sha, head_sha: row.head_sha, start_sha: row.start_sha };
  out.merge_error = row.merge_error;
  if (detail.divergedCommitsCount !== undefined) out.diverged_commits_count = detail.divergedCommitsCount;
  // GitLab: `expose :user do expose :can_merge … end`, the entity's last field.
  out.user = { can_merge: detail.canMerge };
  return out;
}
