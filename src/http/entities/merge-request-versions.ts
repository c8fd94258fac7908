import { VERSION_DIFF_LIMITS } from '../../domain/repository/diffs.js';
import type { MergeRequestVersionRow } from '../../projections/merge-requests/tables.js';
import type { CommitView } from '../../projections/repository/queries.js';
import { toCommit } from './repository.js';
import { iso } from './users.js';

/** GitLab 12's Entities::MergeRequestDiff and Entities::MergeRequestDiffFull, and the commits of a merge request. */

/**
 * MergeRequestDiff#save_diffs: no commits is `empty` (real_size null); otherwise real_size is
 * the DiffCollection's ("N", "N+" past the limit, then `overflow`), `collected` when any file
 * changed, else the state machine's initial `empty`.
 */
export function versionState(version: Pick<MergeRequestVersionRow, 'commit_shas' | 'files_count'>): { state: 'empty' | 'collected' | 'overflow'; real_size: string | null } {
  if (version.commit_shas.length === 0) return { state: 'empty', real_size: null };
  if (version.files_count > VERSION_DIFF_LIMITS.maxFiles) return { state: 'overflow', real_size: `${VERSION_DIFF_LIMITS.maxFiles}+` };
  return { state: version.files_count > 0 ? 'collected' : 'empty', real_size: String(version.files_count) };
}

/** Entities::MergeRequestDiff: `id, head_commit_sha, base_commit_sha, start_commit_sha, created_at, merge_request_id, state, real_size`. */
export const toMergeRequestDiff = (version: MergeRequestVersionRow) => {
  const { state, real_size } = versionState(version);
  return {
    id: version.id,
    head_commit_sha: version.head_commit_sha,
    base_commit_sha: version.base_commit_sha,
    start_commit_sha: version.start_commit_sha,
    created_at: iso(version.created_at),
    merge_request_id: version.merge_request_id,
    state,
    real_size,
  };
};

/**
 * A commit of a merge request's version as Entities::Commit: GitLab reads them from
 * merge_request_diff_commits (CachedCommit), which keep no parents, so `parent_ids` is [].
 */
export const toVersionCommit = (commit: CommitView, projectWebUrl: string) => toCommit(commit, projectWebUrl, []);

