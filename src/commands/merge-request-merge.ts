import type { Db } from '../database/database.js';
import { DomainError } from '../domain/errors.js';
import type { MergeRequestCommand } from '../domain/merge-requests/decider.js';
import type { RefWrite, RepositoryEvent, RepositoryWrite } from '../domain/repository/decider.js';
import type { MergeRequestEvent } from '../domain/merge-requests/events.js';
import type { ProjectEvent } from '../domain/projects/events.js';
import { inForkNetworkOf } from '../projections/projects/queries.js';
import type { StoredEvent } from '../eventstore/types.js';
import type { MergeRequestRow } from '../projections/merge-requests/tables.js';
import { causedBy } from './kernel/causation.js';
import { handleCommands } from './kernel/handler.js';
import { branchesOf, updateMergeRequest, versionOf } from './merge-requests.js';
import { checkRefWrites, committerOf, deferredRefs, lockedHead, type RefWriter } from './repository.js';
import { createMergeCommit } from './repository-merge.js';
import { mergeRequests } from '../domain/merge-requests/aggregate.js';
import { spec, run } from './kernel/run.js';
import type { CommandContext, Writer } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';
import { branchHead, checkMergeability, mergeRequestHeads, versionCommitCount } from '../projections/merge-requests/mergeability.js';
import { isAncestor, mergeCommitOf } from '../projections/repository/history.js';

/**
 * Accepting merge requests (GitLab's MergeRequests::MergeService), their merge status
 * (MergeRequest#check_mergeability) and the refresh on pushes (MergeRequests::RefreshService).
 * The merges themselves are src/commands/repository-merge.ts's.
 */

// ───────────────────────────── Accepting ─────────────────────────────

export interface MergeInput {
  readonly id: number;
  readonly projectId: number;
  /** For "See merge request <group/project>!<iid>". */
  readonly projectPath: string;
  readonly byId: number;
  readonly sha?: string | undefined;
  /** `squash=true` (GitLab only ever sets it from the merge call). */
  readonly squash: boolean;
  readonly mergeCommitMessage?: string | undefined;
  readonly squashCommitMessage?: string | undefined;
  readonly shouldRemoveSourceBranch?: boolean | undefined;
  readonly whenPipelineSucceeds: boolean;
  /** MergeRequest#can_remove_source_branch? for the caller: push_code, and the source is neither protected nor the default branch. */
  readonly mayRemoveSourceBranch: boolean;
  /** The caller, whose ref moves pass the branch check (src/commands/repository.ts). */
  readonly writer: RefWriter;
  /** The source branch's project (a fork's, or the project) and the caller as its writer, who removes the source branch. */
  readonly sourceProjectId: number;
  readonly sourceWriter: RefWriter;
}

/** MergeRequest#default_merge_commit_message (12.x, without closing issues: forgelog has none). */
export const defaultMergeCommitMessage = (row: Pick<MergeRequestRow, 'source_branch' | 'target_branch' | 'title' | 'iid'>, projectPath: string) =>
  [`Merge branch '${row.source_branch}' into '${row.target_branch}'`, row.title, `See merge request ${projectPath}!${row.iid}`].join('\n\n');

/**
 * PUT …/merge: in one transaction the squash commit (when asked), the merge commit of the diff
 * head into the target's head (parents: target, source), the target branch's move, the merge
 * request's Merged event and, when asked and allowed, the source branch's deletion.
 */
export async function mergeMergeRequest(w: Writer, input: MergeInput): Promise<void> {
  const time = Math.floor(w.ctx.now().getTime() / 1000);
  const fork = input.sourceProjectId !== input.projectId;
  let refs: RefWrite[] = [];
  let sourceRefs: RefWrite[] = [];
  const decideMerge = async (trx: Db): Promise<MergeRequestCommand> => {
    refs = [];
    sourceRefs = [];
    const row = await trx.selectFrom('merge_requests').selectAll().where('id', '=', input.id).executeTakeFirstOrThrow();
    const targetSha = await lockedHead(trx, input.projectId, row.target_branch);
    const sourceSha = await lockedHead(trx, row.source_project_id, row.source_branch);
    const command = {
      type: 'MergeMergeRequest' as const,
      byId: input.byId,
      expectedSha: input.sha,
      squash: input.squash ? true : undefined,
      branchesExist: targetSha !== undefined && sourceSha !== undefined,
      whenPipelineSucceeds: input.whenPipelineSucceeds,
    };
    if (row.state !== 'opened' || targetSha === undefined || sourceSha === undefined) return { ...command, merge: null };
    const who = await committerOf(trx, input.byId);
    // MergeRequests::SquashService: nothing to squash for one commit and no message (the diff
    // head is the squash); else one commit by the merge request's author (`git commit --message`).
    const squash = input.squash || row.squash;
    const squashOne = squash && (await versionCommitCount(trx, row.latest_version_id)) < 2 && input.squashCommitMessage === undefined;
    const message = input.mergeCommitMessage ?? defaultMergeCommitMessage(row, input.projectPath);
    const squashCommit = squash && !squashOne ? { message: `${(input.squashCommitMessage ?? row.title).replace(/\s+$/, '')}\n`, author: await committerOf(trx, row.author_id) } : undefined;
    let made;
    try {
      made = await createMergeCommit(trx, input.projectId, { targetSha, sourceSha: row.head_sha, message, author: who, committer: who, time, squash: squashCommit });
    } catch (error) {
      // Conflicts: the decider answers 405 (already found) or 406.
      if (error instanceof DomainError && error.code === 'not_acceptable') return { ...command, merge: null };
      throw error;
    }
    const squashSha = squashOne ? row.head_sha : made.squashSha;
    const commits = [made.sha, ...(made.squashSha ? [made.squashSha] : [])];
    refs = [{ type: 'PushBranch', branch: row.target_branch, oldSha: targetSha, newSha: made.sha, commits }];
    // MergeService#delete_source_branch?: the call's should_remove_source_branch, else the merge request's force_remove_source_branch.
    const removeSource = input.shouldRemoveSourceBranch ?? row.force_remove_source_branch;
    if (removeSource && input.mayRemoveSourceBranch && sourceSha === row.head_sha) (fork ? sourceRefs : refs).push({ type: 'DeleteBranch', branch: row.source_branch });
    return { ...command, merge: { mergeCommitSha: made.sha, squashCommitSha: squashSha } };
  };
  await handleCommands(w, [
    spec(mergeRequests, input.id, decideMerge),
    deferredRefs(input.projectId, async (trx): Promise<RepositoryWrite> => {
      // Gitaly's UserMergeBranch runs the branch check: a push of an open merge request's head.
      await checkRefWrites(trx, input.projectId, input.writer, refs, { mergeRequest: true });
      return { type: 'UpdateRefs', commands: refs };
    }),
    // A fork's source branch is removed in the fork (MergeService#delete_source_branch, by the caller there).
    ...(fork
      ? [
          deferredRefs(input.sourceProjectId, async (trx): Promise<RepositoryWrite> => {
            await checkRefWrites(trx, input.sourceProjectId, input.sourceWriter, sourceRefs);
            return { type: 'UpdateRefs', commands: sourceRefs };
          }),
        ]
      : []),
  ]);
}

// ───────────────────────────── The merge ref ─────────────────────────────

/**
 * GET …/merge_ref (GitLab 12's MergeabilityCheckService with `recheck`, MergeToRefService as
 * the merge request's author): the merge commit of the diff head into the target's head,
 * with the default merge commit message, written to the merge ref without moving a branch;
 * the merge status found on the way is recorded. `mayMerge`: whether the author may
 * (`admin_merge_request`; MergeToRefService refuses otherwise and the request is then not
 * mergeable). The merge ref's head, or null when the heads do not merge.
 */
export async function updateMergeRef(w: Writer, input: { id: number; projectPath: string; mayMerge: boolean }): Promise<string | null> {
  const time = Math.floor(w.ctx.now().getTime() / 1000);
  let made: string | null = null;
  const result = await run(w, mergeRequests, input.id, async (trx): Promise<MergeRequestCommand> => {
    made = null;
    const row = await trx.selectFrom('merge_requests').selectAll().where('id', '=', input.id).executeTakeFirstOrThrow();
    const { status, targetSha } = await checkMergeability(trx, row);
    const mergeRef = { type: 'RecordMergeRef' as const, sourceSha: row.head_sha, targetSha };
    if (status !== 'can_be_merged' || !input.mayMerge) return { ...mergeRef, mergeStatus: 'cannot_be_merged', commitSha: null };
    const author = await committerOf(trx, row.author_id);
    const merge = await createMergeCommit(trx, row.project_id, { targetSha, sourceSha: row.head_sha, message: defaultMergeCommitMessage(row, input.projectPath), author, committer: author, time });
    made = merge.sha;
    return { ...mergeRef, mergeStatus: 'can_be_merged', commitSha: merge.sha };
  });
  // None recorded when the merge request moved on meanwhile (closed, a new head): not its merge ref.
  return result.events.some((e) => e.type === 'MergeRequestMergeRefUpdated') ? made : null;
}

// ───────────────────────────── Refresh ─────────────────────────────

/** A merge request removed meanwhile, or one no longer open, has nothing left to refresh. */
async function ignoringGone(run: Promise<unknown>): Promise<void> {
  try {
    await run;
  } catch (error) {
    if (!(error instanceof DomainError && error.code === 'not_found')) throw error;
  }
}

/** A command the decider drops (a check of heads no merge request has): what a reaction with nothing to do sends. */
const NOTHING: MergeRequestCommand = { type: 'RecordMergeStatus', mergeStatus: 'cannot_be_merged', sourceSha: '0'.repeat(40), targetSha: '0'.repeat(40) };

/** Records the merge status of the merge request's current heads (dropped by the decider when the heads moved since). */
async function recordMergeStatus(w: Writer, id: number): Promise<void> {
  await ignoringGone(
    run(
      w,
      mergeRequests,
      id,
      async (trx): Promise<MergeRequestCommand> => {
        const row = await trx.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
        if (!row) return NOTHING;
        const heads = await mergeRequestHeads(trx, row);
        // The status of these heads is recorded already (an opening's, or a reaction to an earlier event of the same heads).
        if (row.merge_status !== 'unchecked' && heads.sourceSha === row.head_sha && heads.targetSha === row.merge_status_target_sha) return NOTHING;
        const { status, targetSha } = await checkMergeability(trx, row, heads);
        return { type: 'RecordMergeStatus', mergeStatus: status, sourceSha: row.head_sha, targetSha };
      },
    ),
  );
}

/** A new diff version of the source branch's current head against the target's (dropped when the head is the version's already). */
async function recordVersion(w: Writer, id: number): Promise<void> {
  await ignoringGone(
    run(
      w,
      mergeRequests,
      id,
      async (trx): Promise<MergeRequestCommand> => {
        const row = await trx.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
        if (!row) return NOTHING;
        const heads = await mergeRequestHeads(trx, row);
        if (heads.sourceSha === row.head_sha || row.state !== 'opened') return NOTHING;
        const version = await versionOf(trx, branchesOf(row), heads);
        return version === null ? NOTHING : { type: 'RecordVersion', version };
      },
    ),
  );
}

/**
 * RefreshService#post_merge_manually_merged: a push to the target branch that brings in the
 * merge request's source head (it reaches the head now and did not before) merges it, by the
 * pusher, with the commit that brought the head in as its merge commit. True when it did.
 */
async function recordMergedByPush(w: Writer, mr: { id: number; head_sha: string }, projectId: number, oldSha: string | null, newSha: string, byId: number | null): Promise<boolean> {
  if (byId === null) return false;
  const db = w.ctx.db;
  if (oldSha !== null && (await isAncestor(db, projectId, mr.head_sha, oldSha))) return false;
  const mergeCommitSha = await mergeCommitOf(db, projectId, mr.head_sha, newSha, oldSha);
  if (mergeCommitSha === null) return false;
  await ignoringGone(run(w, mergeRequests, mr.id, { type: 'RecordMergedByPush', byId, headSha: mr.head_sha, mergeCommitSha }));
  return true;
}

/** The open merge requests whose source (in any project of the fork network) or target is a project's branch. */
const openMergeRequests = (db: Db, projectId: number, side: 'source' | 'target', branch: string) =>
  db
    .selectFrom('merge_requests')
    .select(['id', 'project_id', 'source_project_id', 'source_branch', 'target_branch', 'head_sha'])
    .where(side === 'source' ? 'source_project_id' : 'project_id', '=', projectId)
    .where(side === 'source' ? 'source_branch' : 'target_branch', '=', branch)
    .where('state', '=', 'opened')
    .orderBy('id')
    .execute();

type RefreshedEvent =
  | RepositoryEvent
  | Extract<MergeRequestEvent, { type: 'MergeRequestReopened' | 'MergeRequestUpdated' }>
  | Extract<ProjectEvent, { type: 'ProjectForkUnlinked' }>;

/**
 * GitLab's MergeRequests::RefreshService and the mergeability checks that follow an opening:
 * - a push to (or the creation of) a branch gives the open merge requests it is the source of
 *   a new diff version, then checks the merge status of those it is the source or target of,
 *   but merges those it is the target of when it brought their source head in;
 * - a branch deleted closes the open merge requests it is the source of (RefreshService#
 *   close_upon_missing_source_branch_ref, by the pusher) and checks those it is the target of;
 * - a reopened merge request, or one whose target branch changed, is checked (an opening records
 *   the status it checked itself: openMergeRequestCommand; openings an older version appended
 *   without it, not yet reacted to when this one started, stay unchecked until their next
 *   refresh, and the single view checks them when read);
 * - a project that leaves its fork network (DELETE /projects/:id/fork) closes the open merge
 *   requests between it and projects no longer of its network (Projects::UnlinkForkService).
 * Every step reads the current heads, so a replay or a late reaction records nothing stale.
 */
export const mergeRequestRefreshReactor: Reactor = {
  name: 'merge-request-refresh',
  handles: ['BranchCreated', 'BranchUpdated', 'BranchDeleted', 'MergeRequestReopened', 'MergeRequestUpdated', 'ProjectForkUnlinked'] satisfies RefreshedEvent['type'][],
  async react(stored: StoredEvent, ctx: CommandContext) {
    const event = stored as unknown as RefreshedEvent;
    const w = causedBy(ctx, stored);
    switch (event.type) {
      case 'MergeRequestReopened':
        await recordMergeStatus(w, event.data.id);
        return;
      case 'MergeRequestUpdated':
        if (event.data.changes.target_branch !== undefined) await recordMergeStatus(w, event.data.id);
        return;
      case 'BranchCreated':
      case 'BranchUpdated': {
        const { project_id, branch } = event.data;
        for (const mr of await openMergeRequests(ctx.db, project_id, 'source', branch)) {
          await recordVersion(w, mr.id);
          await recordMergeStatus(w, mr.id);
        }
        const oldSha = event.type === 'BranchUpdated' ? event.data.old_sha : null;
        for (const mr of await openMergeRequests(ctx.db, project_id, 'target', branch)) {
          if (!(await recordMergedByPush(w, mr, project_id, oldSha, event.data.new_sha, stored.actorId))) await recordMergeStatus(w, mr.id);
        }
        return;
      }
      case 'BranchDeleted': {
        const { project_id, branch } = event.data;
        const byId = stored.actorId;
        for (const mr of await openMergeRequests(ctx.db, project_id, 'source', branch)) {
          if (byId === null) continue;
          // Still gone when the reaction runs: a branch created again meanwhile keeps its merge requests.
          if ((await branchHead(ctx.db, project_id, branch)) !== undefined) continue;
          await ignoringGone(
            updateMergeRequest(w, { id: mr.id, ...branchesOf(mr), fields: {}, stateEvent: 'close', byId }),
          );
        }
        for (const mr of await openMergeRequests(ctx.db, project_id, 'target', branch)) await recordMergeStatus(w, mr.id);
        return;
      }
      case 'ProjectForkUnlinked': {
        const byId = stored.actorId;
        if (byId === null) return;
        const id = event.data.id;
        const crossing = await ctx.db
          .selectFrom('merge_requests')
          .select(['id', 'project_id', 'source_project_id', 'source_branch', 'target_branch'])
          .where('state', '=', 'opened')
          .where((eb) => eb.or([eb.and([eb('source_project_id', '=', id), eb('project_id', '<>', id)]), eb.and([eb('project_id', '=', id), eb('source_project_id', '<>', id)])]))
          .orderBy('id')
          .execute();
        for (const mr of crossing) {
          if (await inForkNetworkOf(ctx.db, mr.source_project_id, mr.project_id)) continue;
          await ignoringGone(updateMergeRequest(w, { id: mr.id, ...branchesOf(mr), fields: {}, stateEvent: 'close', byId }));
        }
        return;
      }
    }
  },
};
