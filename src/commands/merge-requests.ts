import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { type BranchFacts, type MergeRequestCommand, type MergeRequestFields } from '../domain/merge-requests/decider.js';
import type { VersionData } from '../domain/merge-requests/events.js';
import { VERSION_DIFF_LIMITS } from '../domain/repository/diffs.js';
import { CommitGraph } from '../projections/repository/commit-graph.js';
import { commitsBetween, mergeBase } from '../projections/repository/history.js';
import { mergeRequestHeads, mergeRequestHeadsIn, mergeRequestHeadsQuery, mergeStatusOf } from '../projections/merge-requests/mergeability.js';
import { collectDiffs, ObjectReader } from '../projections/repository/queries.js';
import { nextId } from './kernel/handler.js';
import type { MergeRequestRow } from '../projections/merge-requests/tables.js';
import { fetchCommit } from './repository-fetch.js';
import { iidTaker, type IidCounter } from './kernel/iids.js';
import { batchInTransaction } from '../database/read-together.js';
import { run } from './kernel/run.js';
import { mergeRequests } from '../domain/merge-requests/aggregate.js';
import type { Writer } from './kernel/context.js';

/** Merge requests' iids, per project; the lock key space is 'mrqs' as an int. */
const MERGE_REQUEST_IIDS: IidCounter = { table: 'merge_request_iids', scope: 'project_id', lockSpace: 0x6d727173 };

/**
 * A diff version of the source head against the target head (GitLab's MergeRequestDiff):
 * the merge base, the source's commits not in the target (newest first) and the number of
 * files the merge base → head diff changes; its files are stored beside it
 * (`merge_request_version_diffs`), in the transaction, for the reads of its changes.
 */
export async function takeVersion(trx: Db, projectId: number, headSha: string, startSha: string, graph = new CommitGraph(trx, projectId, 128)): Promise<VersionData> {
  const history = await versionHistory(trx, projectId, headSha, startSha, graph);
  return versionData(history, await versionDiff(trx, projectId, history.base, headSha, new ObjectReader(trx, projectId)));
}

/** A version's walks of the history: its merge base and commits. */
async function versionHistory(trx: Db, projectId: number, headSha: string, startSha: string, graph: CommitGraph) {
  const base = await mergeBase(trx, projectId, headSha, startSha, graph);
  return { headSha, base, startSha, commitShas: await commitsBetween(trx, projectId, startSha, headSha, graph) };
}

/** A version's diff, stored: its id and how many files it changes. */
async function versionDiff(trx: Db, projectId: number, base: string | null, headSha: string, objects: ObjectReader) {
  const diff = await collectVersionDiff(trx, projectId, base, headSha, objects);
  const { version_id: versionId } = (await trx.executeQuery(diff.store)).rows[0]!;
  return { versionId, filesCount: diff.filesCount };
}

/**
 * A version's diff and the statement that stores it, whose one row is the version's id: the
 * one given, or one the insert takes.
 */
async function collectVersionDiff(trx: Db, projectId: number, base: string | null, headSha: string, objects: ObjectReader, versionId?: number) {
  // MergeRequestDiff#save_diffs: the merge base → head diff (from the empty tree without a
  // merge base) collected with Commit.max_diff_options; real_size counts every changed file.
  const diff = await collectDiffs(trx, projectId, base, headSha, VERSION_DIFF_LIMITS, objects);
  const store = trx
    .insertInto('merge_request_version_diffs')
    .values({ version_id: versionId ?? sql<number>`nextval('merge_request_versions_id_seq')`, files: JSON.stringify(diff.diffs) })
    .returning('version_id')
    .compile();
  return { store, filesCount: diff.changedFiles };
}

const versionData = (history: Awaited<ReturnType<typeof versionHistory>>, diff: Awaited<ReturnType<typeof versionDiff>>): VersionData => ({
  version_id: diff.versionId,
  head_commit_sha: history.headSha,
  base_commit_sha: history.base,
  start_commit_sha: history.startSha,
  commit_shas: history.commitShas,
  files_count: diff.filesCount,
});

/**
 * A version (takeVersion) and the merge status of its heads (mergeStatusOf), as an opening
 * takes them: the diff and the merge walk the same commits and trees, side by side on one
 * reader, so each is read once and a level of both costs one statement. The diff is not
 * stored yet: `store` goes out with the opening's next statements (openMergeRequestCommand).
 */
async function versionAndMergeStatus(trx: Db, projectId: number, headSha: string, startSha: string, versionId: number) {
  const graph = new CommitGraph(trx, projectId, 128);
  const objects = new ObjectReader(trx, projectId, true);
  const history = await versionHistory(trx, projectId, headSha, startSha, graph);
  const diff = collectVersionDiff(trx, projectId, history.base, headSha, objects, versionId);
  const mergeStatus = mergeStatusOf(trx, projectId, headSha, startSha, history.commitShas.length, graph, objects);
  // Both settled before either's error ends the transaction: neither sends a statement after its rollback.
  await Promise.allSettled([diff, mergeStatus]);
  const { store, filesCount } = await diff;
  return { history, store, filesCount, mergeStatus: await mergeStatus };
}

/** A merge request's source and target: the projects and branches. */
export interface MergeRequestBranches {
  readonly projectId: number;
  readonly sourceProjectId: number;
  readonly sourceBranch: string;
  readonly targetBranch: string;
}

export const branchesOf = (row: Pick<MergeRequestRow, 'project_id' | 'source_project_id' | 'source_branch' | 'target_branch'>): MergeRequestBranches => ({
  projectId: row.project_id,
  sourceProjectId: row.source_project_id,
  sourceBranch: row.source_branch,
  targetBranch: row.target_branch,
});

/** The heads of a merge request's branches, share-locked until the commit: the version taken of them must still be of the heads then. */
const lockedHeads = (trx: Db, b: MergeRequestBranches) => mergeRequestHeads(trx, headsOf(b), true);
const headsOf = (b: MergeRequestBranches) => ({ project_id: b.projectId, source_project_id: b.sourceProjectId, source_branch: b.sourceBranch, target_branch: b.targetBranch });

/**
 * A version of a source head against a target head (takeVersion), the source's commit first
 * fetched into the target project when it is a fork's (MergeRequest#fetch_source_branch!);
 * none when a head is missing or the source is the target.
 */
export async function versionOf(trx: Db, b: MergeRequestBranches, heads: { sourceSha: string | undefined; targetSha: string | undefined }): Promise<VersionData | null> {
  return (await fetchedHeads(trx, b, heads)) ? takeVersion(trx, b.projectId, heads.sourceSha!, heads.targetSha!) : null;
}

/** Whether a version is taken of the heads (versionOf), the source's commit fetched first. */
async function fetchedHeads(trx: Db, b: MergeRequestBranches, heads: { sourceSha: string | undefined; targetSha: string | undefined }): Promise<boolean> {
  const { sourceSha, targetSha } = heads;
  if (sourceSha === undefined || targetSha === undefined || (b.sourceProjectId === b.projectId && b.sourceBranch === b.targetBranch)) return false;
  await fetchCommit(trx, b.sourceProjectId, b.projectId, sourceSha);
  return true;
}

/**
 * An open merge request of the same branches (MergeRequest#validate_branches), the first by
 * iid: read under the project's iid lock, so two requests never both find none.
 */
function openDuplicate(trx: Db, b: MergeRequestBranches, exceptId: number | null) {
  let duplicate = trx
    .selectFrom('merge_requests')
    .select('iid')
    .where('project_id', '=', b.projectId)
    .where('source_project_id', '=', b.sourceProjectId)
    .where('source_branch', '=', b.sourceBranch)
    .where('target_branch', '=', b.targetBranch)
    .where('state', '=', 'opened');
  if (exceptId !== null) duplicate = duplicate.where('id', '<>', exceptId);
  return duplicate.orderBy('iid').limit(1);
}

/** What MergeRequest#validate_branches looks at, read in the write transaction: the heads and an open duplicate's iid. */
const branchFacts = (heads: { sourceSha: string | undefined; targetSha: string | undefined }, openDuplicateIid: number | null): BranchFacts => ({
  sourceExists: heads.sourceSha !== undefined,
  targetExists: heads.targetSha !== undefined,
  openDuplicateIid,
});

export interface OpenInput extends MergeRequestBranches {
  readonly authorId: number;
  readonly title: string;
  readonly fields: MergeRequestFields;
}

/**
 * MergeRequests::CreateService: the first diff version, the next iid of the project and the
 * branches' facts, all in the write transaction. The version (the history's walks and the
 * diff: the costly part) and the merge status of its heads (checked on the commit graph the
 * version loaded, and recorded with the opening) are taken before the project's iid lock, so
 * openings in one project wait on each other only for the iid, the duplicate check and the
 * commit. The heads, the version's id and what the iid takes first (iidTaker) are read in the
 * transaction's first round trip. The command as a function of the transaction, for a spec
 * committed with others (labels created on first use).
 */
export function openMergeRequestCommand(input: OpenInput): (trx: Db) => Promise<MergeRequestCommand> {
  return async (trx) => {
    const iids = iidTaker(trx, MERGE_REQUEST_IIDS, input.projectId);
    const [headRows, versionIds] = await batchInTransaction(trx, [mergeRequestHeadsQuery(trx, headsOf(input), true), sql`select nextval('merge_request_versions_id_seq')::int as id`.compile(trx), ...iids.first]);
    const heads = mergeRequestHeadsIn(headsOf(input), headRows!.rows);
    const versionId = (versionIds!.rows[0] as { id: number }).id;
    const taken = (await fetchedHeads(trx, input, heads)) ? await versionAndMergeStatus(trx, input.projectId, heads.sourceSha!, heads.targetSha!, versionId) : undefined;
    // The iid's lock (the project's) also keeps two requests from both finding no open duplicate;
    // the version's diff is stored before the lock is asked for, with it.
    const duplicate = openDuplicate(trx, input, null).$asScalar();
    const { iid, alongside: duplicateIid } = await iids.take<number>(duplicate, taken ? [taken.store] : []);
    const version = taken ? versionData(taken.history, { versionId, filesCount: taken.filesCount }) : null;
    const facts = branchFacts(heads, duplicateIid);
    return {
      type: 'OpenMergeRequest',
      projectId: input.projectId,
      sourceProjectId: input.sourceProjectId,
      iid,
      authorId: input.authorId,
      title: input.title,
      sourceBranch: input.sourceBranch,
      targetBranch: input.targetBranch,
      fields: input.fields,
      branches: facts,
      version,
      mergeStatus: taken?.mergeStatus,
    };
  };
}

/** Opens a merge request on its own (`openMergeRequestCommand` in one transaction); its id. */
export async function openMergeRequest(w: Writer, input: OpenInput): Promise<number> {
  const id = await nextId(w.ctx.db, 'merge_requests_id_seq');
  await run(w, mergeRequests, id, openMergeRequestCommand(input));
  return id;
}

export interface UpdateInput extends MergeRequestBranches {
  readonly id: number;
  /** The target branch after the update (`targetBranch`) and before it (`previousTargetBranch`). */
  /** The target branch before it: a version against the new one is taken when they differ. */
  readonly previousTargetBranch?: string | undefined;
  readonly fields: MergeRequestFields;
  readonly stateEvent?: 'close' | 'reopen' | undefined;
  readonly byId: number;
}

/** MergeRequests::UpdateService (and Close/Reopen): a changed target branch or a reopening checks the branches again. */
export function updateMergeRequestCommand(input: UpdateInput): (trx: Db) => Promise<MergeRequestCommand> {
  return async (trx) => {
    // A new target or a reopening checks for an open duplicate: under the lock openings take (nextIid's).
    if (input.targetBranch !== input.previousTargetBranch || input.stateEvent === 'reopen') {
      await sql`select pg_advisory_xact_lock(${MERGE_REQUEST_IIDS.lockSpace}, ${input.projectId})`.execute(trx);
    }
    const heads = await lockedHeads(trx, input);
    const facts = branchFacts(heads, (await openDuplicate(trx, input, input.id).executeTakeFirst())?.iid ?? null);
    const retarget = input.previousTargetBranch !== undefined && input.targetBranch !== input.previousTargetBranch;
    const version = retarget ? await versionOf(trx, input, heads) : null;
    return { type: 'UpdateMergeRequest', fields: input.fields, stateEvent: input.stateEvent, byId: input.byId, branches: facts, version };
  };
}

export async function updateMergeRequest(w: Writer, input: UpdateInput): Promise<void> {
  await run(w, mergeRequests, input.id, updateMergeRequestCommand(input));
}
