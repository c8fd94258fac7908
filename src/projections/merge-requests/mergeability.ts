import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { MergeStatus } from '../../domain/merge-requests/events.js';
import type { CommitGraph } from '../repository/commit-graph.js';
import { mergeability } from '../repository/merges.js';
import type { ObjectReader } from '../repository/queries.js';
import type { MergeRequestRow } from './tables.js';

/**
 * A merge request's merge status (MergeRequest#check_mergeability), read from the repository's
 * projected branches and objects: the single view shows it when the stored one is unchecked,
 * and the refresh reactor (src/commands/merge-request-merge.ts) records it.
 */

/** A branch's head, or undefined when the branch is gone. */
export const branchHead = async (db: Db, projectId: number, branch: string): Promise<string | undefined> => (await branchHeads(db, [{ projectId, branch }]))[0];

/**
 * Branches' heads in one statement, in the order asked (undefined: the branch is gone);
 * `forShare`: share-locked until the commit, so that a head a version is taken of is still
 * the head then.
 */
export async function branchHeads(db: Db, branches: readonly { projectId: number; branch: string }[], forShare = false): Promise<(string | undefined)[]> {
  return headsIn(branches, (await db.executeQuery(branchHeadsQuery(db, branches, forShare))).rows);
}

type HeadRow = { project_id: number; name: string; sha: string };

/** branchHeads' statement, for a caller to send with others; headsIn reads its rows. */
const branchHeadsQuery = (db: Db, branches: readonly { projectId: number; branch: string }[], forShare: boolean) =>
  sql<HeadRow>`
    select project_id, name, sha from repository_branches
     where (project_id, name) in (${sql.join(branches.map((b) => sql`(${b.projectId}::int, ${b.branch}::text)`))})
     ${forShare ? sql`for share` : sql``}`.compile(db);

const headsIn = (branches: readonly { projectId: number; branch: string }[], rows: readonly HeadRow[]) =>
  branches.map((b) => rows.find((row) => row.project_id === b.projectId && row.name === b.branch)?.sha);

type HeadsOf = Pick<MergeRequestRow, 'project_id' | 'source_project_id' | 'source_branch' | 'target_branch'>;
const sourceAndTarget = (row: HeadsOf) => [
  { projectId: row.source_project_id, branch: row.source_branch },
  { projectId: row.project_id, branch: row.target_branch },
];

/** The heads of a merge request's source and target branches (branchHeads). */
export async function mergeRequestHeads(db: Db, row: HeadsOf, forShare = false): Promise<{ sourceSha: string | undefined; targetSha: string | undefined }> {
  return mergeRequestHeadsIn(row, (await db.executeQuery(mergeRequestHeadsQuery(db, row, forShare))).rows);
}

/** mergeRequestHeads' statement, for a caller to send with others; mergeRequestHeadsIn reads its rows. */
export const mergeRequestHeadsQuery = (db: Db, row: HeadsOf, forShare = false) => branchHeadsQuery(db, sourceAndTarget(row), forShare);

export function mergeRequestHeadsIn(row: HeadsOf, rows: readonly unknown[]): { sourceSha: string | undefined; targetSha: string | undefined } {
  const [sourceSha, targetSha] = headsIn(sourceAndTarget(row), rows as HeadRow[]);
  return { sourceSha, targetSha };
}

/** How many commits a merge request diff version holds. */
export async function versionCommitCount(db: Db, versionId: number): Promise<number> {
  const version = await db.selectFrom('merge_request_versions').select('commit_shas').where('id', '=', versionId).executeTakeFirst();
  return version?.commit_shas.length ?? 0;
}

/**
 * MergeRequest#check_if_can_be_merged (12.x): `!broken? && repository.can_be_merged?(diff_head_sha,
 * target_branch)` — a merge request without commits or with a branch gone cannot be merged,
 * else it can when the diff head merges into the target's head without conflicts. `heads`:
 * the branches' heads (mergeRequestHeads) when the caller has read them.
 */
export async function checkMergeability(db: Db, row: MergeRequestRow, heads?: Awaited<ReturnType<typeof mergeRequestHeads>>): Promise<{ status: MergeStatus; targetSha: string }> {
  const { sourceSha, targetSha } = heads ?? (await mergeRequestHeads(db, row));
  if (targetSha === undefined || sourceSha === undefined) return { status: 'cannot_be_merged', targetSha: targetSha ?? row.start_sha };
  return { status: await mergeStatusOf(db, row.project_id, row.head_sha, targetSha, await versionCommitCount(db, row.latest_version_id)), targetSha };
}

/**
 * The rest of check_if_can_be_merged once both branches are there: a diff head (with its
 * version's number of commits) against a target head; `graph` and `objects`: the commit graph
 * and the object reader of the caller's walks of these heads (a version taken of them).
 */
export async function mergeStatusOf(db: Db, projectId: number, headSha: string, targetSha: string, commitCount: number, graph?: CommitGraph, objects?: ObjectReader): Promise<MergeStatus> {
  if (commitCount === 0) return 'cannot_be_merged';
  return (await mergeability(db, projectId, headSha, targetSha, graph, objects)).canBeMerged ? 'can_be_merged' : 'cannot_be_merged';
}

/**
 * The merge status the single view shows: GitLab's `check_mergeability` when the stored one is
 * `unchecked` (an open merge request whose heads moved and whose check has not run yet).
 * Read-only: the refresh reactor records the check.
 */
export async function currentMergeStatus(db: Db, row: MergeRequestRow): Promise<MergeRequestRow['merge_status']> {
  if (row.merge_status !== 'unchecked' || row.state !== 'opened') return row.merge_status;
  return (await checkMergeability(db, row)).status;
}
