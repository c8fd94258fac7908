import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { serviceError } from '../domain/errors.js';
import { applyActions, buildTrees, type FileAction, type FileEntry } from '../domain/repository/files.js';
import { type CommitDetail, type RepositoryCommand } from '../domain/repository/decider.js';
import { blob, cleanIdent, commit, type GitObject, MODES, parseCommit, type Signature } from '../domain/repository/objects.js';
import type { EventMetadata } from '../eventstore/types.js';
import { findObject, readFiles } from '../projections/repository/queries.js';
import { run, spec } from './kernel/run.js';
import { repository } from '../domain/repository/aggregate.js';
import type { CommandContext } from './kernel/context.js';


/** What the events record of a commit made here: its message and author (the push activity's title, the chat's commit list). */
const detailOf = (made: { message: string; author: { name: string } }): CommitDetail => ({ message: made.message, author_name: made.author.name });

/**
 * The object store: git objects written in the transaction of the command whose event first
 * references them (the command is a function of that transaction), so a refused or failed
 * push leaves no object behind and a committed one commits its objects with its event.
 * Content-addressed: writing an object already there writes nothing.
 */
export async function storeObjects(trx: Db, projectId: number, objects: readonly GitObject[]): Promise<void> {
  const unique = new Map(objects.map((o) => [o.sha, o]));
  if (unique.size === 0) return;
  await trx
    .insertInto('repository_objects')
    .values([...unique.values()].map((o) => ({ project_id: projectId, sha: o.sha, type: o.type, size: o.content.length, content: o.content })))
    .onConflict((oc) => oc.columns(['project_id', 'sha']).doNothing())
    .execute();
}

async function lockedHead(trx: Db, projectId: number, branch: string): Promise<string | undefined> {
  const { rows } = await sql<{ sha: string }>`select sha from repository_branches where project_id = ${projectId} and name = ${branch} for update`.execute(trx);
  return rows[0]?.sha;
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
}

/**
 * One commit of file actions on a branch (GitLab's Files::MultiService / Repository#multi_action):
 * on the branch's head, or on `startBranch`'s when the branch is new (then created), or as
 * the root commit of an empty repository. The time is the command's, so the SHA is fixed
 * once the event is written.
 */
export async function commitFiles(ctx: CommandContext, input: CommitInput, metadata: EventMetadata): Promise<string> {
  const time = Math.floor(ctx.now().getTime() / 1000);
  let sha = '';
  await run(
    ctx,
    repository,
    input.projectId,
    async (trx): Promise<RepositoryCommand> => {
      const head = await lockedHead(trx, input.projectId, input.branch);
      const empty = (await trx.selectFrom('repository_branches').select('name').where('project_id', '=', input.projectId).limit(1).execute()).length === 0;
      // Commits::CreateService#validate!: on a branch, or a new branch from an existing one (an empty repository takes anything).
      const start = input.startBranch === input.branch ? head : await lockedHead(trx, input.projectId, input.startBranch);
      if (!empty && start === undefined) throw serviceError('You can only create or edit files when you are on a branch');
      if (!empty && input.startBranch !== input.branch && head !== undefined) {
        throw serviceError(`A branch called '${input.branch}' already exists. Switch to that branch in order to make changes`);
      }
      const base = head ?? start;
      const parent = base === undefined ? undefined : await findObject(trx, input.projectId, base);
      const before = parent ? await readFiles(trx, input.projectId, parseCommit(parent.content).tree) : new Map<string, FileEntry>();
      const { files, blobs } = applyActions(before, input.actions, empty);
      const { root, trees } = buildTrees(files);
      const signature = (who: { name: string; email: string }): Signature => ({ name: cleanIdent(who.name), email: cleanIdent(who.email), time, tzOffset: 0 });
      const author = signature(input.author);
      const made = commit({ tree: root, parents: base ? [base] : [], author, committer: signature(input.committer), message: input.message });
      await storeObjects(trx, input.projectId, [...blobs, ...trees, made]);
      sha = made.sha;
      const commitDetails = [detailOf({ message: input.message, author })];
      return head === undefined
        ? { type: 'CreateBranch', branch: input.branch, sha: made.sha, commits: [made.sha], commitDetails }
        : { type: 'PushBranch', branch: input.branch, oldSha: head, newSha: made.sha, commits: [made.sha], commitDetails };
    },
    metadata,
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
 * commit"), authored and committed by the creator. A spec to commit with the project.
 */
export function readmeSpec(ctx: CommandContext, input: { projectId: number; branch: string; name: string; description: string | null; creatorId: number }, metadata: EventMetadata) {
  const time = Math.floor(ctx.now().getTime() / 1000);
  return spec(repository, 
    input.projectId,
    async (trx): Promise<RepositoryCommand> => {
      const who = await committerOf(trx, input.creatorId);
      const signature: Signature = { name: cleanIdent(who.name), email: cleanIdent(who.email), time, tzOffset: 0 };
      const readme = blob(`# ${input.name}\n\n${input.description ?? ''}`);
      const { root, trees } = buildTrees(new Map([['README.md', { mode: MODES.file, sha: readme.sha }]]));
      const made = commit({ tree: root, parents: [], author: signature, committer: signature, message: 'Initial commit' });
      await storeObjects(trx, input.projectId, [readme, ...trees, made]);
      return { type: 'CreateBranch', branch: input.branch, sha: made.sha, commits: [made.sha], commitDetails: [detailOf({ message: 'Initial commit', author: signature })] };
    },
    metadata,
  );
}

/** POST /projects/:id/repository/branches: a branch at an existing commit (Branches::CreateService). */
export async function createBranch(ctx: CommandContext, projectId: number, branch: string, sha: string, metadata: EventMetadata) {
  return run(ctx, repository, projectId, { type: 'CreateBranch', branch, sha, commits: [], commitDetails: [] }, metadata);
}

/** DELETE /projects/:id/repository/branches/:branch (Branches::DeleteService). */
export async function deleteBranch(ctx: CommandContext, projectId: number, branch: string, metadata: EventMetadata) {
  return run(ctx, repository, projectId, { type: 'DeleteBranch', branch }, metadata);
}
