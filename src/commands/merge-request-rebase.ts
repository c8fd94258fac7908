import type { Db } from '../database/database.js';
import { serviceError } from '../domain/errors.js';
import { mergeRequests } from '../domain/merge-requests/aggregate.js';
import { PUSH_COMMITS_LIMIT, type RepositoryWrite } from '../domain/repository/decider.js';
import { cleanIdent, commit, type Signature } from '../domain/repository/objects.js';
import { branchHead } from '../projections/merge-requests/mergeability.js';
import { commitsBetween, isAncestor } from '../projections/repository/history.js';
import { pickCommit } from '../projections/repository/merges.js';
import { findCommits, type CommitView } from '../projections/repository/queries.js';
import type { Writer } from './kernel/context.js';
import { fetchCommit } from './repository-fetch.js';
import { run } from './kernel/run.js';
import { checkRefWrites, lockedHead, runRefs, storeObjects, type RefWriter } from './repository.js';

/** MergeRequests::RebaseService::REBASE_ERROR: the merge request's merge_error when a rebase fails. */
export const REBASE_ERROR = 'Rebase failed. Please rebase locally';

export interface RebaseInput {
  readonly id: number;
  /** The merge request's project, whose target branch the source is rebased onto. */
  readonly projectId: number;
  /** The source branch's project (a fork's, or the project), where the rebase writes. */
  readonly sourceProjectId: number;
  readonly sourceBranch: string;
  readonly targetBranch: string;
  readonly committer: { readonly name: string; readonly email: string };
  readonly writer: RefWriter;
}

/** A change of the source that does not apply to the target any more: the rebase stops, nothing is written. */
class RebaseConflict extends Error {}

/**
 * PUT …/merge_requests/:iid/rebase (GitLab 12's MergeRequests::RebaseService, through
 * Gitaly's UserRebaseConfirmable, which runs `git rebase`): the source branch's own commits
 * (those the target's head does not reach; merge commits left out, as `git rebase` leaves
 * them) replayed oldest first onto the target's head, each keeping its author and message,
 * committed by the caller, one that has become empty dropped; then the source branch moves to
 * the last of them, under the branch rules of a push. A source the target's head already
 * reaches is left as it is. When a change conflicts, nothing is written but the merge
 * request's merge_error (`MergeRequestRebaseFailed`). A fork's source is rebased in the fork,
 * the target's head fetched into it first. GitLab runs this in a background job
 * and answers 202 at once; here it is done when the request answers.
 */
export async function rebaseMergeRequest(w: Writer, input: RebaseInput): Promise<'rebased' | 'up_to_date' | 'failed'> {
  const { db } = w.ctx;
  const [source, target] = await Promise.all([branchHead(db, input.sourceProjectId, input.sourceBranch), branchHead(db, input.projectId, input.targetBranch)]);
  if (source === undefined) throw serviceError('Source branch does not exist');
  // A target head the fork lacks is no ancestor of its source: the source's history is all in the fork.
  if (target !== undefined && (await isAncestor(db, input.sourceProjectId, target, source))) return 'up_to_date';
  try {
    if (target === undefined) throw new RebaseConflict();
    await runRefs(w, input.sourceProjectId, (trx) => replay(trx, input, Math.floor(w.ctx.now().getTime() / 1000)));
    return 'rebased';
  } catch (error) {
    if (!(error instanceof RebaseConflict)) throw error;
    await run(w, mergeRequests, input.id, { type: 'RecordRebaseFailure', error: REBASE_ERROR });
    return 'failed';
  }
}

async function replay(trx: Db, input: RebaseInput, time: number): Promise<RepositoryWrite> {
  const { sourceProjectId: projectId, sourceBranch } = input;
  const source = await lockedHead(trx, projectId, sourceBranch);
  const target = await branchHead(trx, input.projectId, input.targetBranch);
  if (source === undefined) throw serviceError('Source branch does not exist');
  if (target === undefined) throw new RebaseConflict();
  await fetchCommit(trx, input.projectId, projectId, target);
  // commitsBetween lists newest first; git rebase replays oldest first.
  const own = (await findCommits(trx, projectId, (await commitsBetween(trx, projectId, target, source)).reverse())).filter((c) => c.parents.length <= 1);
  const committer: Signature = { name: cleanIdent(input.committer.name), email: cleanIdent(input.committer.email), time, tzOffset: 0 };
  let onto: CommitView = (await findCommits(trx, projectId, [target]))[0]!;
  const made: string[] = [];
  for (const picked of own) {
    const merged = await pickCommit(trx, projectId, picked, onto, 'cherry_pick');
    if (merged.conflicts.length > 0 || merged.root === null) throw new RebaseConflict();
    const { root, trees } = merged;
    if (root === onto.tree) continue; // became empty: git rebase drops it
    const next = commit({ tree: root, parents: [onto.sha], author: picked.author, committer, message: picked.message });
    await storeObjects(trx, projectId, [...merged.blobs, ...trees, next]);
    onto = { sha: next.sha, tree: root, parents: [onto.sha], author: picked.author, committer, message: picked.message };
    made.unshift(next.sha);
  }
  const move: RepositoryWrite = {
    type: 'PushBranch',
    branch: sourceBranch,
    oldSha: source,
    newSha: onto.sha,
    commits: made.slice(0, PUSH_COMMITS_LIMIT),
    commitCount: made.length,
  };
  await checkRefWrites(trx, projectId, input.writer, [move]);
  return move;
}
