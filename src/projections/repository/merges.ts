import type { Db } from '../../database/database.js';
import { notFound } from '../../domain/errors.js';
import type { FileEntry } from '../../domain/repository/files.js';
import { blobsToRead, type MergeConflict, mergeTrees, type TreeMerge } from '../../domain/repository/merge.js';
import { mergeBase } from './history.js';
import { type CommitView, findCommit, readBlobs, readFiles } from './queries.js';

/**
 * The three-way merge of two commits of a project's repository, read from its objects:
 * whether they merge (GitLab's `can_be_merged?`) for a merge request's status, which a GET
 * shows, and the merged tree the merge commit (src/commands/repository-merge.ts) is made of.
 */

export interface Mergeability {
  readonly canBeMerged: boolean;
  /** The conflicted paths, sorted (empty when it merges). */
  readonly conflicts: readonly MergeConflict[];
  /** The best common ancestor, or null for unrelated histories (then merged against the empty tree). */
  readonly mergeBase: string | null;
}

export interface Merged extends TreeMerge {
  readonly mergeBase: string | null;
}

/** The three-way merge of `sourceSha` into `targetSha` (ours: the target). */
export async function mergeCommits(db: Db, projectId: number, sourceSha: string, targetSha: string): Promise<Merged> {
  const [source, target] = await Promise.all([findCommit(db, projectId, sourceSha), findCommit(db, projectId, targetSha)]);
  if (!source || !target) throw notFound('Commit');
  const base = await mergeBase(db, projectId, targetSha, sourceSha);
  const baseCommit = base === null ? undefined : await findCommit(db, projectId, base);
  const [baseFiles, ours, theirs] = await Promise.all([
    baseCommit ? readFiles(db, projectId, baseCommit.tree) : new Map<string, FileEntry>(),
    readFiles(db, projectId, target.tree),
    readFiles(db, projectId, source.tree),
  ]);
  const contents = await readBlobs(db, projectId, blobsToRead(baseFiles, ours, theirs));
  return { ...mergeTrees(baseFiles, ours, theirs, contents), mergeBase: base };
}

/**
 * Can `sourceSha` be merged into `targetSha` without conflicts (GitLab's
 * `repository.can_be_merged?(source_sha, target_branch)`)? A source already in the
 * target merges (to the target's tree). Throws notFound('Commit') when either is not a
 * commit of the project.
 */
export async function mergeability(db: Db, projectId: number, sourceSha: string, targetSha: string): Promise<Mergeability> {
  const merged = await mergeCommits(db, projectId, sourceSha, targetSha);
  return { canBeMerged: merged.conflicts.length === 0, conflicts: merged.conflicts, mergeBase: merged.mergeBase };
}


/**
 * A commit's change applied to `onto` (git cherry-pick, mainline 1 for a merge commit),
 * or taken back from it (git revert): the three-way merge of `onto` with the commit
 * against its first parent (cherry-pick), or with its first parent against the commit
 * (revert). A root commit's parent is the empty tree.
 */
export async function pickCommit(db: Db, projectId: number, picked: CommitView, onto: CommitView, direction: 'cherry_pick' | 'revert'): Promise<TreeMerge> {
  const parent = picked.parents[0] === undefined ? undefined : await findCommit(db, projectId, picked.parents[0]);
  const [before, after, ours] = await Promise.all([
    parent ? readFiles(db, projectId, parent.tree) : new Map<string, FileEntry>(),
    readFiles(db, projectId, picked.tree),
    readFiles(db, projectId, onto.tree),
  ]);
  const [base, theirs] = direction === 'cherry_pick' ? [before, after] : [after, before];
  const contents = await readBlobs(db, projectId, blobsToRead(base, ours, theirs));
  return mergeTrees(base, ours, theirs, contents);
}
