import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { serviceError } from '../domain/errors.js';
import { applyActions, buildTrees, type FileAction, type FileEntry, type Refusals } from '../domain/repository/files.js';
import { type RecordedCommitDetail, type RefCommand, refOfCommand, type RefWrite, type RepositoryCommand, type RepositoryWrite, validBranchName } from '../domain/repository/decider.js';
import { blob, cleanIdent, commit, type GitObject, MODES, parseCommit, type Signature } from '../domain/repository/objects.js';
import { branchCheck, type BranchChange, isProtected, type ProtectedRef, tagCheck } from '../domain/repository/push-access.js';
import { protectedTagRefsOf } from '../projections/protected-tags/queries.js';
import { reachableFromAny } from '../projections/repository/history.js';
import { indexCommits } from '../projections/repository/commit-graph.js';
import { entryAt, findCommit, findCommits, findObject, lastCommitFor, readFiles, resolveCommit, pushAccess, type CommitView } from '../projections/repository/queries.js';
import { pickCommit } from '../projections/repository/merges.js';
import { spec } from './kernel/run.js';
import { handleCommands } from './kernel/handler.js';
import { repository } from '../domain/repository/aggregate.js';
import type { CommandContext, CommandSpec, DeferredSpecs, Writer } from './kernel/context.js';
import { defaultBranchProtection } from './default-branch-protection.js';
import { usersByEmail } from '../projections/users/queries.js';

// ───────────────────────────── Ref writes ─────────────────────────────

/**
 * A repository command as one command per ref's stream, in the order the refs first appear
 * (src/domain/repository/decider.ts: each ref is its own stream, so writes to different refs
 * never contend; the commands of one write commit together).
 */
export function refSpecs(projectId: number, command: RepositoryCommand): CommandSpec<any, any, any>[] {
  const byRef = new Map<string, Exclude<RepositoryCommand, { type: 'UpdateRefs' }>[]>();
  for (const one of command.type === 'UpdateRefs' ? command.commands : [command]) {
    const ref = refOfCommand(one);
    byRef.set(ref, [...(byRef.get(ref) ?? []), one]);
  }
  return [...byRef].map(([ref, commands]) =>
    spec(repository, { projectId, ref }, commands.length === 1 ? commands[0]! : { type: 'UpdateRefs', commands: commands as RefCommand[] }),
  );
}

/**
 * The write with the details of the commits its moves list (decider.ts, CommitDetails), from
 * the stored commits, which the write's transaction has stored by now: message and author name
 * as the commit objects record them, and `author_id`, the user whose email is the author email
 * at this time (ProcessCommitWorker's `commit.author`: User.find_by_any_email when the push is
 * processed, case-insensitive; forgelog has no secondary emails). One query for the commits
 * and one for the users, whatever the moves.
 */
export async function withCommitDetails(trx: Db, projectId: number, write: RepositoryWrite): Promise<RepositoryCommand> {
  const moves = write.type === 'UpdateRefs' ? write.commands : write.type === 'SaveTagRelease' ? [] : [write];
  const listedBy = (move: RefWrite) => (move.type === 'CreateBranch' || move.type === 'PushBranch' ? move.commits : move.type === 'CreateTag' ? [move.commitSha] : []);
  const commits = new Map((await findCommits(trx, projectId, [...new Set(moves.flatMap(listedBy))])).map((c) => [c.sha, c]));
  const users = await usersByEmail(trx, [...commits.values()].map((c) => c.author.email));
  const detailOf = (sha: string): RecordedCommitDetail => {
    const found = commits.get(sha);
    if (!found) throw new Error(`a ref write lists the commit ${sha}, which is not stored`);
    return { message: found.message, author_name: found.author.name, author_id: users.get(found.author.email.toLowerCase())?.id ?? null };
  };
  const detailed = (move: RefWrite): RefCommand =>
    move.type === 'CreateBranch' || move.type === 'PushBranch' || move.type === 'CreateTag' ? { ...move, commitDetails: listedBy(move).map(detailOf) } : move;
  return write.type === 'UpdateRefs' ? { type: 'UpdateRefs', commands: write.commands.map(detailed) } : write.type === 'SaveTagRelease' ? write : detailed(write);
}

/**
 * Ref writes a transaction's work decides (which refs, to what): built in the transaction,
 * given their commits' details (withCommitDetails), then one command per ref.
 */
export const deferredRefs = (projectId: number, build: (trx: Db) => Promise<RepositoryWrite>): DeferredSpecs => ({
  deferred: async (trx) => refSpecs(projectId, await withCommitDetails(trx, projectId, await build(trx))),
});

/**
 * Runs the ref writes `build` decides in its transaction: the one way the repository's refs
 * are written. A write that creates the default branch protects it in the same transaction
 * (`default_branch_protection`: ./default-branch-protection.ts).
 */
export async function runRefs(w: Writer, projectId: number, build: (trx: Db) => Promise<RepositoryWrite>): Promise<void> {
  await handleCommands(w, refWrites(projectId, build));
}

/**
 * runRefs' specs, for a write that commits them with other commands (a new project's README):
 * the ref writes `build` decides, then the default branch's protection when they create it.
 */
export function refWrites(projectId: number, build: (trx: Db) => Promise<RepositoryWrite>): DeferredSpecs[] {
  let written: RepositoryWrite | undefined;
  return [deferredRefs(projectId, async (trx) => (written = await build(trx))), defaultBranchProtection(projectId, () => written)];
}

/**
 * The object store: git objects written in the transaction of the command whose event first
 * references them (the command is a function of that transaction), so a refused or failed
 * push leaves no object behind and a committed one commits its objects with its event.
 * Content-addressed: writing an object already there writes nothing.
 * Each new commit also gets its row of the commit graph index (`repository_commits`:
 * parents, generation, committer time, count), computed from its parents' rows, which are
 * stored before it or in the same call (src/projections/repository/commit-graph.ts), and its
 * rows of the per-path change index (path-changes.ts). A caller that stores one write's objects
 * in several calls (a push) says `index: false` and indexes the commits once, at the end,
 * with all of its objects at hand (indexCommits): the change index then diffs trees in memory.
 */
export async function storeObjects(trx: Db, projectId: number, objects: readonly GitObject[], options: { readonly index?: boolean } = {}): Promise<void> {
  const unique = new Map(objects.map((o) => [o.sha, o]));
  if (unique.size === 0) return;
  await trx
    .insertInto('repository_objects')
    .values([...unique.values()].map((o) => ({ project_id: projectId, sha: o.sha, type: o.type, size: o.content.length, content: o.content })))
    .onConflict((oc) => oc.columns(['project_id', 'sha']).doNothing())
    .execute();
  if (options.index !== false) await indexCommits(trx, projectId, [...unique.values()].filter((o) => o.type === 'commit'), unique);
}

/** A branch's head, its row locked until the transaction ends (the head a write builds on). */
export async function lockedHead(trx: Db, projectId: number, branch: string): Promise<string | undefined> {
  const { rows } = await sql<{ sha: string }>`select sha from repository_branches where project_id = ${projectId} and name = ${branch} for update`.execute(trx);
  return rows[0]?.sha;
}

// ───────────────────────────── Push access ─────────────────────────────

/**
 * Who writes a ref, on which project: what Gitlab::UserAccess and Gitlab::Checks::BranchCheck
 * know of the user and the project (src/domain/repository/push-access.ts).
 */
export interface RefWriter {
  readonly userId: number;
  readonly isAdmin: boolean;
  /** The user's level on the project, null for none. */
  readonly role: number | null;
  readonly canPushCode: boolean;
  readonly fullPath: string;
  /** project_project_members_url, named by the check's message for an empty repository. */
  readonly membersUrl: string;
  readonly defaultBranch: string | null;
  /** For a writer without push_code: the branches merge requests let them push to (Pusher's `collaboration`). */
  readonly collaboration?: ReadonlySet<string>;
}

/**
 * The one push-access check of every ref write (branch creation and deletion, commits,
 * merges, tags), in the transaction that writes: Gitlab::Checks::BranchCheck or TagCheck for
 * each ref move of the command, in order, as Gitaly's pre-receive hook runs them. Throws
 * GitLab's refusal, which the services answer with 400 (`mergeRequest`: the moves merge an
 * open merge request; `forced`: the branches a push moves to a commit that does not contain
 * their head). A tag deleted and created again by the same command is a tag update.
 */
export async function checkRefWrites(
  trx: Db,
  projectId: number,
  writer: RefWriter,
  commands: readonly RepositoryWrite[],
  options: { mergeRequest?: boolean; forced?: ReadonlySet<string> } = {},
) {
  const { refs, who } = await pushAccess(trx, projectId, writer);
  const heads = new Map((await trx.selectFrom('repository_branches').select(['name', 'sha']).where('project_id', '=', projectId).execute()).map((b) => [b.name, b.sha]));
  const moves = commands.flatMap((command) => (command.type === 'UpdateRefs' ? command.commands : command.type === 'SaveTagRelease' ? [] : [command]));
  let protectedTags: ProtectedRef[] | undefined;
  for (const [i, move] of moves.entries()) {
    if (move.type === 'CreateTag' || move.type === 'DeleteTag') {
      protectedTags ??= await protectedTagRefsOf(trx, projectId);
      const previous = moves[i - 1];
      if (move.type === 'CreateTag' && previous?.type === 'DeleteTag' && previous.tag === move.tag) continue;
      const next = moves[i + 1];
      const kind = move.type === 'CreateTag' ? 'create' : next?.type === 'CreateTag' && next.tag === move.tag ? 'update' : 'delete';
      const refusal = tagCheck({ kind, tag: move.tag }, protectedTags, who);
      if (refusal !== null) throw serviceError(refusal);
      continue;
    }
    let change: BranchChange;
    if (move.type === 'CreateBranch') {
      // safe_commit_for_new_protected_branch?: a protected branch contains the new head (asked only of a protected branch).
      const protectedHeads = [...heads].filter(([name]) => isProtected(refs, name)).map(([, sha]) => sha);
      const fromProtectedBranch = isProtected(refs, move.branch) && (await reachableFromAny(trx, projectId, move.sha, protectedHeads));
      change = { kind: 'create', branch: move.branch, fromProtectedBranch };
    } else if (move.type === 'PushBranch') {
      change = { kind: 'push', branch: move.branch, mergeRequest: options.mergeRequest ?? false, force: options.forced?.has(move.branch) ?? false };
    } else change = { kind: 'delete', branch: move.branch, isDefault: move.branch === writer.defaultBranch };
    const refusal = branchCheck(change, refs, who, { empty: heads.size === 0, fullPath: writer.fullPath, membersUrl: writer.membersUrl });
    if (refusal !== null) throw serviceError(refusal);
    if (move.type === 'CreateBranch') heads.set(move.branch, move.sha);
    else if (move.type === 'PushBranch') heads.set(move.branch, move.newSha);
    else heads.delete(move.branch);
  }
}

export interface CommitInput {
  readonly projectId: number;
  readonly branch: string;
  /** The branch the commit starts from when `branch` does not exist (GitLab: start_branch, by default branch). */
  readonly startBranch: string;
  readonly message: string;
  readonly actions: readonly FileAction[];
  readonly author: { readonly name: string; readonly email: string };
  readonly committer: { readonly name: string; readonly email: string };
  readonly writer: RefWriter;
  /** Whose words refuse an action on a file that is or is not there (src/domain/repository/files.ts); the commits API's by default. */
  readonly refusals?: Refusals;
  /**
   * Files::UpdateService's `last_commit_id`: the commit the caller last saw change `path`. A
   * newer change of it on the start branch refuses the commit.
   */
  readonly lastSeen?: { readonly path: string; readonly sha: string };
}

/**
 * One commit of file actions on a branch (GitLab's Files::MultiService / Repository#multi_action):
 * on the branch's head, or on `startBranch`'s when the branch is new (then created), or as
 * the root commit of an empty repository. The time is the command's, so the SHA is fixed
 * once the event is written.
 */
export async function commitFiles(w: Writer, input: CommitInput): Promise<string> {
  const time = Math.floor(w.ctx.now().getTime() / 1000);
  let sha = '';
  await runRefs(
    w,
    input.projectId,
    async (trx): Promise<RepositoryWrite> => {
      const head = await lockedHead(trx, input.projectId, input.branch);
      const empty = (await trx.selectFrom('repository_branches').select('name').where('project_id', '=', input.projectId).limit(1).execute()).length === 0;
      // Commits::CreateService#validate!: on a branch, or a new branch from an existing one (an empty repository takes anything).
      const start = input.startBranch === input.branch ? head : await lockedHead(trx, input.projectId, input.startBranch);
      if (!empty && start === undefined) throw serviceError('You can only create or edit files when you are on a branch');
      if (!empty && input.startBranch !== input.branch && head !== undefined) {
        throw serviceError(`A branch called '${input.branch}' already exists. Switch to that branch in order to make changes`);
      }
      const base = head ?? start;
      if (input.lastSeen && start !== undefined) {
        // Files::BaseService#file_has_changed?: the last commit of the path on the start branch.
        const entry = await entryAt(trx, input.projectId, (await findCommit(trx, input.projectId, start))!.tree, input.lastSeen.path);
        const last = await lastCommitFor(trx, input.projectId, start, input.lastSeen.path, entry?.sha ?? null);
        if (last && last !== input.lastSeen.sha) throw serviceError('You are attempting to update a file that has changed since you started editing it.');
      }
      const parent = base === undefined ? undefined : await findObject(trx, input.projectId, base);
      const before = parent ? await readFiles(trx, input.projectId, parseCommit(parent.content).tree) : new Map<string, FileEntry>();
      const { files, blobs } = applyActions(before, input.actions, empty, input.refusals);
      const { root, trees } = buildTrees(files);
      const signature = (who: { name: string; email: string }): Signature => ({ name: cleanIdent(who.name), email: cleanIdent(who.email), time, tzOffset: 0 });
      const author = signature(input.author);
      const made = commit({ tree: root, parents: base ? [base] : [], author, committer: signature(input.committer), message: input.message });
      await storeObjects(trx, input.projectId, [...blobs, ...trees, made]);
      sha = made.sha;
      const move: RepositoryWrite =
        head === undefined
          ? { type: 'CreateBranch', branch: input.branch, sha: made.sha, commits: [made.sha] }
          : { type: 'PushBranch', branch: input.branch, oldSha: head, newSha: made.sha, commits: [made.sha] };
      await checkRefWrites(trx, input.projectId, input.writer, [move]);
      return move;
    },
  );
  return sha;
}

/** The repository's branch names, locked until the commit (a new default branch must still exist then). */
export async function lockedBranchNames(trx: Db, projectId: number): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from repository_branches where project_id = ${projectId} order by name for share`.execute(trx);
  return rows.map((r) => r.name);
}

/** A user as a commit names them (GitLab's Gitlab::Git::User: name and commit email). */
export async function committerOf(db: Db, userId: number): Promise<{ name: string; email: string }> {
  const user = await db.selectFrom('users').select(['name', 'email']).where('id', '=', userId).executeTakeFirstOrThrow();
  return { name: user.name, email: user.email };
}

/**
 * `initialize_with_readme`: the default branch's first commit, README.md with GitLab 12's
 * content (Projects::CreateService#create_readme: `# <name>\n\n<description>`, "Initial
 * commit"), authored and committed by the creator. Specs to commit with the project: the ref
 * write of every first write (`refWrites`), so the default branch gets
 * `default_branch_protection` as a first push gives it (GitLab: the README's commit runs the
 * post-receive path, Git::BranchPushService, like any other).
 */
export function readmeSpecs(ctx: CommandContext, input: { projectId: number; branch: string; name: string; description: string | null; creatorId: number }): DeferredSpecs[] {
  const time = Math.floor(ctx.now().getTime() / 1000);
  return refWrites(input.projectId, async (trx): Promise<RepositoryWrite> => {
    const who = await committerOf(trx, input.creatorId);
    const signature: Signature = { name: cleanIdent(who.name), email: cleanIdent(who.email), time, tzOffset: 0 };
    const readme = blob(`# ${input.name}\n\n${input.description ?? ''}`);
    const { root, trees } = buildTrees(new Map([['README.md', { mode: MODES.file, sha: readme.sha }]]));
    const made = commit({ tree: root, parents: [], author: signature, committer: signature, message: 'Initial commit' });
    await storeObjects(trx, input.projectId, [readme, ...trees, made]);
    return { type: 'CreateBranch', branch: input.branch, sha: made.sha, commits: [made.sha] };
  });
}

/**
 * POST /projects/:id/repository/branches (GitLab 12's Branches::CreateService, with
 * `create_master_if_empty`): in an empty repository, first README.md (empty) committed to
 * master by the caller ("Add README.md"); then the branch at the commit `ref` names. Both in
 * one command: a refused branch leaves no master behind. Returns the branch's commit.
 */
export async function createBranch(w: Writer, input: { projectId: number; branch: string; ref: string; writer: RefWriter }): Promise<string> {
  const time = Math.floor(w.ctx.now().getTime() / 1000);
  let sha = '';
  await runRefs(
    w,
    input.projectId,
    async (trx): Promise<RepositoryWrite> => {
      const { projectId, branch, ref } = input;
      const names = await lockedBranchNames(trx, projectId);
      const moves: RefWrite[] = [];
      let readme: string | undefined;
      if (names.length === 0) {
        const who = await committerOf(trx, input.writer.userId);
        const signature: Signature = { name: cleanIdent(who.name), email: cleanIdent(who.email), time, tzOffset: 0 };
        const empty = blob('');
        const { root, trees } = buildTrees(new Map([['README.md', { mode: MODES.file, sha: empty.sha }]]));
        const made = commit({ tree: root, parents: [], author: signature, committer: signature, message: 'Add README.md' });
        await storeObjects(trx, projectId, [empty, ...trees, made]);
        readme = made.sha;
        names.push('master');
        moves.push({ type: 'CreateBranch', branch: 'master', sha: made.sha, commits: [made.sha] });
      }
      // Branches::ValidateNewService, then Repository#add_branch's ref (an unknown ref is named first when the branch is new).
      const target = ref === 'master' && readme !== undefined ? readme : (await resolveCommit(trx, projectId, ref))?.sha;
      if (names.includes(branch)) throw serviceError('Branch already exists');
      if (target === undefined) throw serviceError(`Invalid reference name: ${ref}`);
      if (!validBranchName(branch)) throw serviceError('Branch name is invalid');
      moves.push({ type: 'CreateBranch', branch, sha: target, commits: [] });
      await checkRefWrites(trx, projectId, input.writer, moves);
      sha = target;
      return moves.length === 1 ? moves[0]! : { type: 'UpdateRefs', commands: moves };
    },
  );
  return sha;
}

/** DELETE /projects/:id/repository/branches/:branch (Branches::DeleteService: the branch check decides). */
export async function deleteBranch(w: Writer, projectId: number, branch: string, writer: RefWriter) {
  return runRefs(
    w,
    projectId,
    async (trx): Promise<RepositoryWrite> => {
      const command: RepositoryWrite = { type: 'DeleteBranch', branch };
      await checkRefWrites(trx, projectId, writer, [command]);
      return command;
    },
  );
}

// ───────────────────────────── Cherry-pick and revert ─────────────────────────────

export interface PickInput {
  readonly projectId: number;
  readonly branch: string;
  readonly commitSha: string;
  readonly direction: 'cherry_pick' | 'revert';
  readonly committer: { readonly name: string; readonly email: string };
  readonly writer: RefWriter;
}

/**
 * POST …/commits/:sha/cherry_pick and …/revert (GitLab 12's Commits::CherryPickService and
 * RevertService, through Gitaly's UserCherryPick / UserRevert): the commit's change applied
 * to the branch's head, or taken back from it, as one new commit on the branch. A conflict,
 * or a change that changes nothing, is GitLab's "Sorry, we cannot …" (400). A cherry-pick
 * keeps the commit's author; a revert is the caller's. Returns the new commit.
 */
export async function pickOnto(w: Writer, input: PickInput): Promise<string> {
  const time = Math.floor(w.ctx.now().getTime() / 1000);
  let sha = '';
  await runRefs(w, input.projectId, async (trx): Promise<RepositoryWrite> => {
    const { projectId, branch, commitSha, direction } = input;
    const head = await lockedHead(trx, projectId, branch);
    if (head === undefined) throw serviceError('You can only create or edit files when you are on a branch');
    const [picked, onto] = await findCommits(trx, projectId, [commitSha, head]);
    const merged = await pickCommit(trx, projectId, picked!, onto!, direction);
    const { root, trees } = merged;
    const mergeRequest = await mergedMergeRequest(trx, projectId, picked!);
    const what = mergeRequest ? 'merge request' : 'commit';
    const verb = direction === 'revert' ? 'revert' : 'cherry-pick';
    if (merged.conflicts.length > 0 || root === null || root === onto!.tree) {
      throw serviceError(`Sorry, we cannot ${verb} this ${what} automatically. This ${what} may already have been ${verb}ed, or a more recent commit may have updated some of its content.`);
    }
    const committer: Signature = { name: cleanIdent(input.committer.name), email: cleanIdent(input.committer.email), time, tzOffset: 0 };
    const author = direction === 'cherry_pick' ? picked!.author : committer;
    const message = direction === 'revert' ? revertMessage(picked!, mergeRequest) : await cherryPickMessage(trx, projectId, picked!, mergeRequest);
    const made = commit({ tree: root, parents: [head], author, committer, message });
    await storeObjects(trx, projectId, [...merged.blobs, ...trees, made]);
    sha = made.sha;
    const move: RepositoryWrite = { type: 'PushBranch', branch, oldSha: head, newSha: made.sha, commits: [made.sha] };
    await checkRefWrites(trx, projectId, input.writer, [move]);
    return move;
  });
  return sha;
}

/** Commit#merged_merge_request: the merged merge request whose merge commit it is (a merge commit only). */
async function mergedMergeRequest(db: Db, projectId: number, picked: CommitView): Promise<{ iid: number; commitShas: string[] } | undefined> {
  if (picked.parents.length < 2) return undefined;
  const row = await db
    .selectFrom('merge_requests as m')
    .innerJoin('merge_request_versions as v', 'v.id', 'm.latest_version_id')
    .select(['m.iid', 'v.commit_shas'])
    .where('m.project_id', '=', projectId)
    .where('m.merge_commit_sha', '=', picked.sha)
    .executeTakeFirst();
  return row && { iid: row.iid, commitShas: row.commit_shas };
}

/**
 * Commit#title (what the messages name; the API's `title` is full_title): the first line, or
 * "No commit message"; from 100 characters on, cut at the last space within the first 80,
 * with '…' (Rails' truncate(81, separator: ' ', omission: '…')).
 */
function commitTitle(message: string): string {
  const full = Array.from(message.trim() === '' ? 'No commit message' : (message.split('\n', 1)[0] ?? ''));
  if (full.length < 100) return full.join('');
  const space = full.lastIndexOf(' ', 80);
  return `${full.slice(0, space === -1 ? 80 : space).join('')}…`;
}

/** Commit#revert_message. */
function revertMessage(picked: CommitView, mergeRequest: { iid: number } | undefined): string {
  const description = mergeRequest ? `This reverts merge request !${mergeRequest.iid}` : `This reverts commit ${picked.sha}`;
  return `Revert "${commitTitle(picked.message).trim()}"\n\n${description}`;
}

/** Commit#cherry_pick_message: a merge request's merge commit also lists the merge request's commits, oldest first. */
async function cherryPickMessage(db: Db, projectId: number, picked: CommitView, mergeRequest: { commitShas: string[] } | undefined): Promise<string> {
  const body = [`(cherry picked from commit ${picked.sha})`];
  const commits = mergeRequest ? await findCommits(db, projectId, mergeRequest.commitShas) : [];
  if (commits.length > 0) {
    body.push('');
    for (const each of [...commits].reverse()) body.push(`${each.sha.slice(0, 8)} ${commitTitle(each.message)}`);
  }
  return `${picked.message}\n\n${body.join('\n')}`;
}
