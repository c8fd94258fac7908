import type { Db } from '../../database/database.js';
import type { MergeStatus } from '../../domain/merge-requests/events.js';
import { mergeability } from '../repository/merges.js';
import type { MergeRequestRow } from './tables.js';

/**
 * A merge request's merge status (MergeRequest#check_mergeability), read from the repository's
 * projected branches and objects: the single view shows it when the stored one is unchecked,
 * and the refresh reactor (src/commands/merge-request-merge.ts) records it.
 */

/** A branch's head, or undefined when the branch is gone. */
export const branchHead = async (db: Db, projectId: number, branch: string): Promise<string | undefined> =>
  (await db.selectFrom('repository_branches').select('sha').where('project_id', '=', projectId).where('name', '=', branch).executeTakeFirst())?.sha;

/** How many commits a merge request diff version holds. */
export async function versionCommitCount(db: Db, versionId: number): Promise<number> {
  const version = await db.selectFrom('merge_request_versions').select('commit_shas').where('id', '=', versionId).executeTakeFirst();
  return version?.commit_shas.length ?? 0;
}

/**
 * MergeRequest#check_if_can_be_merged (12.x): `!broken? && repository.can_be_merged?(diff_head_sha,
 * target_branch)` — a merge request without commits or with a branch gone cannot be merged,
 * else it can when the diff head merges into the target's head without conflicts.
 */
export async function checkMergeability(db: Db, row: MergeRequestRow): Promise<{ status: MergeStatus; targetSha: string }> {
  const targetSha = await branchHead(db, row.project_id, row.target_branch);
  const sourceSha = await branchHead(db, row.source_project_id, row.source_branch);
  if (targetSha === undefined || sourceSha === undefined || (await versionCommitCount(db, row.latest_version_id)) === 0) {
    return { status: 'cannot_be_merged', targetSha: targetSha ?? row.start_sha };
  }
  const { canBeMerged } = await mergeability(db, row.project_id, row.head_sha, targetSha);
  return { status: canBeMerged ? 'can_be_merged' : 'cannot_be_merged', targetSha };
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
