import type { ColumnType, Selectable } from 'kysely';
import type { DiffEntry } from '../../domain/repository/diffs.js';
import type { MergeRequestStatus } from '../../domain/merge-requests/decider.js';
import type { MergeStatus } from '../../domain/merge-requests/events.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp, NullableTimestamp } from '../../database/columns.js';


/** GitLab's `merge_requests`, with its metrics (merged/closed by and at) and time tracking totals on the row. */
export interface MergeRequestsTable {
  id: number;
  project_id: number;
  iid: number;
  author_id: number;
  title: string;
  description: string | null;
  state: MergeRequestStatus;
  source_project_id: number;
  source_branch: string;
  target_branch: string;
  /** In GitLab's order (the first is `assignee`). */
  assignee_ids: number[];
  label_ids: number[];
  milestone_id: number | null;
  discussion_locked: boolean | null;
  squash: boolean;
  force_remove_source_branch: boolean;
  allow_collaboration: boolean;
  merge_status: MergeStatus | 'unchecked';
  /** The target head `merge_status` was checked against (the source's is head_sha); null while unchecked, and on rows older than the column. */
  merge_status_target_sha: string | null;
  /** The last rebase's failure (GitLab's merge_error); null when none failed. */
  merge_error: string | null;
  /** The head of refs/merge-requests/:iid/merge (GET …/merge_ref's merge commit) and its parents; null before the first. */
  merge_ref_sha: string | null;
  merge_ref_target_sha: string | null;
  merge_ref_source_sha: string | null;
  /** The latest diff version: source head (`sha`), merge base, target head; its id and changed files. */
  head_sha: string;
  base_sha: string | null;
  start_sha: string;
  latest_version_id: number;
  changes_count: number;
  merge_commit_sha: string | null;
  squash_commit_sha: string | null;
  merged_by_id: number | null;
  merged_at: NullableTimestamp;
  closed_by_id: number | null;
  closed_at: NullableTimestamp;
  time_estimate: number;
  total_time_spent: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** GitLab's `merge_request_diffs`: one per version, newest first by id. */
export interface MergeRequestVersionsTable {
  id: number;
  merge_request_id: number;
  head_commit_sha: string;
  base_commit_sha: string | null;
  start_commit_sha: string;
  commit_shas: string[];
  files_count: number;
  created_at: Timestamp;
}

/**
 * The files of a version's diff as it was taken (GitLab's `merge_request_diff_files`), in
 * git's order, within the version's collection limits. Written by the command that takes the
 * version (src/commands/merge-requests.ts `takeVersion`), not by the projector: like the
 * objects it is derived from, it is never rebuilt.
 */
export interface MergeRequestVersionDiffsTable {
  version_id: number;
  files: ColumnType<DiffEntry[], string, never>;
}

/** Explicit subscriptions (GitLab's `subscriptions`); implicit ones (author, assignees) are not rows. */
export interface MergeRequestSubscriptionsTable {
  merge_request_id: number;
  user_id: number;
  subscribed: boolean;
}

/** The last iid each project handed out (GitLab's InternalId for merge requests). */
export interface MergeRequestIidsTable {
  project_id: number;
  last_iid: number;
}

export interface MergeRequestsReadTables {
  merge_requests: MergeRequestsTable;
  merge_request_versions: MergeRequestVersionsTable;
  merge_request_version_diffs: MergeRequestVersionDiffsTable;
  merge_request_subscriptions: MergeRequestSubscriptionsTable;
  merge_request_iids: MergeRequestIidsTable;
  merge_requests_stream_versions: StreamVersionsTable;
}

export type MergeRequestRow = Selectable<MergeRequestsTable>;
export type MergeRequestVersionRow = Selectable<MergeRequestVersionsTable>;

declare module '../../database/database.js' {
  interface Database extends MergeRequestsReadTables {}
}
