import type { Db } from '../../database/database.js';
import { notFound } from '../../domain/errors.js';
import type { FileEntry } from '../../domain/repository/files.js';
import { blobsToRead, type MergeConflict, mergeTrees, type TreeMerge } from '../../domain/repository/merge.js';
import { mergeBase } from './history.js';
import { findCommit, readFiles } from './queries.js';

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

/** Blob contents by SHA, in one query per 500. */
async function readBlobs(db: Db, projectId: number, shas: readonly string[]): Promise<Map<string, Uint8Array>> {
  const contents = new Map<string, Uint8Array>();
  for (let i = 0; i < shas.length; i += 500) {
    const rows = await db
      .selectFrom('repository_objects')
      .select(['sha', 'content'])
      .where('project_id', '=', projectId)
      .where('type', '=', 'blob')
      .where('sha', 'in', shas.slice(i, i + 500))
      .execute();
    for (const row of rows) contents.set(row.sha, new Uint8Array(row.content));
  }
  return contents;
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

