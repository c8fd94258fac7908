import type { DiffEntry } from '../../domain/repository/diffs.js';
import type { CommitView } from '../../projections/repository/queries.js';
import { toCommit } from './repository.js';

/** GitLab 12's Entities::Diff and Entities::Compare. */

/** Entities::Diff: `old_path, new_path, a_mode, b_mode, new_file, renamed_file, deleted_file, diff` (json_safe_diff). */
export const toDiff = (entry: DiffEntry) => ({
  old_path: entry.old_path,
  new_path: entry.new_path,
  a_mode: entry.a_mode,
  b_mode: entry.b_mode,
  new_file: entry.new_file,
  renamed_file: entry.renamed_file,
  deleted_file: entry.deleted_file,
  diff: entry.diff,
});

export interface CompareView {
  /** The commits of `from..to`, oldest first (Gitlab::Git::Commit.between). */
  readonly commits: readonly CommitView[];
  readonly diffs: readonly DiffEntry[];
  readonly overflow: boolean;
  /** Gitlab::Git::Compare#same: null when either ref is unknown. */
  readonly same: boolean | null;
}

/** Entities::Compare: `commit` (the last of `commits`), `commits`, `diffs`, `compare_timeout`, `compare_same_ref`. */
export const toCompare = (compare: CompareView, projectWebUrl: string) => ({
  commit: compare.commits.length === 0 ? null : toCommit(compare.commits[compare.commits.length - 1]!, projectWebUrl),
  commits: compare.commits.map((commit) => toCommit(commit, projectWebUrl)),
  diffs: compare.diffs.map(toDiff),
  compare_timeout: compare.overflow,
  compare_same_ref: compare.same,
});
