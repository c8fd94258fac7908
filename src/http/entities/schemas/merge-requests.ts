import { arrayOf, bool, dateTime, entity, extend, int, nullable, object, ref, references, str, taskCompletionStatus, values } from './dsl.js';

const user = nullable(ref('UserBasic'));
const state = values('opened', 'closed', 'locked', 'merged');
const mergeStatus = values('unchecked', 'checking', 'can_be_merged', 'cannot_be_merged', 'cannot_be_merged_recheck');

export const MergeRequestBasic = entity('Entities::MergeRequestBasic: the lists (`allow_collaboration` and `allow_maintainer_to_push` on merge requests from forks).', {
  id: int,
  iid: int,
  project_id: int,
  title: str,
  description: nullable(str),
  state,
  created_at: dateTime,
  updated_at: dateTime,
  merged_by: user,
  merged_at: nullable(dateTime),
  closed_by: user,
  closed_at: nullable(dateTime),
  target_branch: str,
  source_branch: str,
  user_notes_count: int,
  upvotes: int,
  downvotes: int,
  author: user,
  assignees: arrayOf(ref('UserBasic')),
  assignee: user,
  source_project_id: int,
  target_project_id: int,
  labels: arrayOf(str),
  work_in_progress: bool,
  milestone: nullable(ref('Milestone')),
  merge_when_pipeline_succeeds: bool,
  merge_status: mergeStatus,
  sha: nullable(str),
  merge_commit_sha: nullable(str),
  squash_commit_sha: nullable(str),
  discussion_locked: nullable(bool),
  should_remove_source_branch: nullable(bool),
  force_remove_source_branch: nullable(bool),
  allow_collaboration: nullable(bool),
  allow_maintainer_to_push: nullable(bool),
  reference: str,
  references,
  web_url: str,
  time_stats: ref('IssuableTimeStats'),
  squash: bool,
  task_completion_status: taskCompletionStatus,
  has_conflicts: bool,
  blocking_discussions_resolved: bool,
  approvals_before_merge: nullable(int),
}, ['allow_collaboration', 'allow_maintainer_to_push']);

export const MergeRequest = extend(MergeRequestBasic, 'Entities::MergeRequest: the single view (`subscribed` unless include_subscribed is off, `diverged_commits_count` with `include_diverged_commits_count=true`).', {
  subscribed: bool,
  changes_count: nullable(str),
  latest_build_started_at: nullable(dateTime),
  latest_build_finished_at: nullable(dateTime),
  first_deployed_to_production_at: nullable(dateTime),
  pipeline: { type: 'null' },
  head_pipeline: { type: 'null' },
  diff_refs: object({ base_sha: nullable(str), head_sha: nullable(str), start_sha: nullable(str) }),
  merge_error: nullable(str),
  diverged_commits_count: int,
  user: object({ can_merge: bool }),
}, ['subscribed', 'diverged_commits_count']);

export const MergeRequestChanges = extend(MergeRequest, 'Entities::MergeRequestChanges: the single view and its diffs.', {
  changes: arrayOf(ref('Diff')),
});

export const IssuableTimeStats = entity('Entities::IssuableTimeStats.', { time_estimate: int, total_time_spent: int, human_time_estimate: nullable(str), human_total_time_spent: nullable(str) });
