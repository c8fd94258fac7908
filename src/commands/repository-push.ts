import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { DomainError } from '../domain/errors.js';
import { PUSH_COMMITS_LIMIT, type RefWrite, type RepositoryWrite } from '../domain/repository/decider.js';
import { type GitObject, parseCommit, parseTag } from '../domain/repository/objects.js';
import { FsckError, type Link, objectLinks, type RefUpdate, walkPushed, ZERO_SHA } from '../domain/repository/receive.js';
import { CommitGraph, dateOrder, reachableOnlyFrom } from '../projections/repository/commit-graph.js';
import { commitsBetween, isAncestor } from '../projections/repository/history.js';
import { findObject } from '../projections/repository/queries.js';
import { objectTypes } from '../projections/repository/reachable.js';
import type { Writer } from './kernel/context.js';
import { checkRefWrites, type RefWriter, runRefs, storeObjects } from './repository.js';
import { indexCommits } from '../projections/repository/commit-graph.js';

/**
 * `git push` (git-receive-pack): the pushed objects checked and connected, then every ref
 * write of the push as one write of the repository (`runRefs`: one command per ref's stream,
 * one transaction, the objects stored in it), through the one ref check (`checkRefWrites`:
 * GitLab's BranchCheck and TagCheck, force pushes included). All or none: git's `atomic`,
 * whether the client asked for it or not. See docs/repository.md, "Pushing with git".
 */

/** A ref write of the push: a branch's or tag's creation, move or deletion. */
export type PushedRef = Extract<RefUpdate, { kind: 'branch' | 'tag' }>;

/**
 * A push refused before or while its refs are written: the `ng` reason of the refs it names,
 * `others` for the rest (they are not written either), and what the client shows on
 * `remote:` lines.
 */
export class PushRefused extends Error {
  constructor(
    readonly reasons: ReadonlyMap<string, string>,
    readonly others: string,
    readonly messages: readonly string[],
  ) {
    super([...reasons.values()][0] ?? others);
    this.name = 'PushRefused';
  }
}

// ───────────────────────────── The pushed objects ─────────────────────────────

export interface Received {
  /** The pushed objects the new tips reach, parents' commits before their children's: what the push stores. */
  readonly objects: readonly GitObject[];
  /** Commits of the repository a tip or a pushed object points to, which it must have and has not. */
  readonly missing: readonly string[];
}

/**
 * What `git index-pack --strict` and receive-pack's connectivity check ask of the pushed
 * objects: each commit, tree and tag sane (FsckError otherwise), every object the tips reach
 * in the pack or in the repository with the type it must have — looked up in batches, and only
 * for what the pack points to outside itself (the repository stores only connected objects,
 * so what it has needs no walk).
 */
export async function receivedObjects(db: Db, projectId: number, pushed: readonly GitObject[], tips: readonly string[]): Promise<Received> {
  const bySha = new Map(pushed.map((o) => [o.sha, o]));
  const links = new Map<string, readonly Link[]>();
  for (const object of bySha.values()) links.set(object.sha, objectLinks(object));
  const walked = walkPushed(tips, bySha, (object) => links.get(object.sha)!);
  const types = await objectTypes(db, projectId, [...walked.outside.keys()]);
  const missing: string[] = [];
  for (const [sha, type] of walked.outside) {
    const found = types.get(sha);
    if (found === undefined) missing.push(sha);
    else if (type !== null && found !== type) throw new FsckError(sha, 'badObjectType', `is a ${found} where a ${type} must be`);
  }
  return { objects: parentsFirst(pushed.filter((o) => walked.reachable.has(o.sha))), missing };
}

/** The objects with every commit after the pushed parents it names (the commit graph index is computed from its parents' rows). */
function parentsFirst(objects: readonly GitObject[]): GitObject[] {
  const commits = new Map(objects.filter((o) => o.type === 'commit').map((o) => [o.sha, { object: o, parents: parseCommit(o.content).parents }]));
  const ordered: GitObject[] = objects.filter((o) => o.type !== 'commit');
  const done = new Set<string>();
  for (const sha of commits.keys()) {
    const stack = [sha];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (done.has(top)) {
        stack.pop();
        continue;
      }
      const pending = commits.get(top)!.parents.filter((p) => commits.has(p) && !done.has(p));
      if (pending.length > 0) {
        stack.push(...pending);
        continue;
      }
      stack.pop();
      done.add(top);
      ordered.push(commits.get(top)!.object);
    }
  }
  return ordered;
}

/** Objects per storeObjects call, and about as many bytes: one statement's parameters and size stay bounded. */
const STORE_BATCH = 1000;
const STORE_BATCH_BYTES = 16 * 1024 * 1024;

/** Stores the push's objects; returns the commits new to the repository (none of them is reachable from a ref of before the push). */
async function storeInBatches(trx: Db, projectId: number, objects: readonly GitObject[]): Promise<Set<string>> {
  let batch: GitObject[] = [];
  let bytes = 0;
  for (const object of objects) {
    batch.push(object);
    bytes += object.content.length;
    if (batch.length >= STORE_BATCH || bytes >= STORE_BATCH_BYTES) {
      await storeObjects(trx, projectId, batch, { index: false });
      batch = [];
      bytes = 0;
    }
  }
  await storeObjects(trx, projectId, batch, { index: false });
  // The commits' indexes once, with every object of the push at hand (their trees diffed in memory).
  const all = new Map(objects.map((o) => [o.sha, o]));
  return new Set(await indexCommits(trx, projectId, [...all.values()].filter((o) => o.type === 'commit'), all));
}

// ───────────────────────────── The refs ─────────────────────────────

export interface PushInput {
  readonly projectId: number;
  readonly writer: RefWriter;
  readonly refs: readonly PushedRef[];
  /** receivedObjects' `objects`. */
  readonly objects: readonly GitObject[];
}

/**
 * What each created branch brings: the commits its tip reaches that no branch had before the
 * push (`git rev-list tip --not --branches`), newest first. One walk for all the tips, against
 * the default branch's head alone: what the default branch lacks is then new to the repository
 * (`fresh`: no branch can reach it) unless it holds older commits, and only then are the other
 * heads asked, those high enough to reach one of them. A push's cost follows what it brings and
 * how far below the default branch's head it forks, not the number of branches.
 */
async function createdBranchCommits(
  trx: Db,
  projectId: number,
  tips: readonly string[],
  heads: ReadonlyMap<string, string>,
  defaultBranch: string | null,
  fresh: ReadonlySet<string>,
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  if (tips.length === 0) return result;
  const graph = new CommitGraph(trx, projectId, 128);
  const defaultHead = defaultBranch === null ? undefined : heads.get(defaultBranch);
  // No default branch among the heads (and some heads): straight to all of them.
  let only = defaultHead === undefined && heads.size > 0 ? undefined : await reachableOnlyFrom(graph, tips, defaultHead === undefined ? [] : [defaultHead]);
  const old = only === undefined ? [] : [...only].filter((sha) => !fresh.has(sha));
  if (only === undefined || (old.length > 0 && heads.size > 1)) {
    const lowest = old.reduce((low, sha) => Math.min(low, graph.get(sha)!.generation), old.length === 0 ? 0 : Infinity);
    const { rows } = await sql<{ sha: string }>`
      select sha from repository_commits where project_id = ${projectId} and sha = any(${[...new Set(heads.values())]}::text[]) and generation >= ${lowest}`.execute(trx);
    only = await reachableOnlyFrom(graph, tips, rows.map((r) => r.sha));
  }
  const wanted = only;
  for (const tip of tips) {
    const out: string[] = [];
    if (wanted.has(tip)) for await (const node of dateOrder(graph, [tip], (sha) => wanted.has(sha))) out.push(node.sha);
    result.set(tip, out);
  }
  return result;
}

/** The commits a branch move brought: the newest PUSH_COMMITS_LIMIT, and their count. */
const moved = (shas: readonly string[]) => ({ commits: shas.slice(0, PUSH_COMMITS_LIMIT), commitCount: shas.length });

/** A tag's target peeled to its commit (annotated tags of tags too), or null when it names no commit. */
async function peel(trx: Db, projectId: number, sha: string): Promise<{ commit: string; message: string | null } | null> {
  let message: string | null = null;
  let at = sha;
  for (let depth = 0; depth < 16; depth++) {
    const object = await findObject(trx, projectId, at);
    if (!object) return null;
    if (object.type === 'commit') return { commit: at, message };
    if (object.type !== 'tag') return null;
    const tag = parseTag(new Uint8Array(object.content));
    if (depth === 0) message = tag.message;
    at = tag.object;
  }
  return null;
}

/**
 * The push's ref writes, all or none. Refused (PushRefused): a ref not at the value the client
 * last saw (git's `failed to update ref`, as its ref transaction words a stale old value), a
 * branch set to anything but a commit or a tag to anything that is not or does not name one
 * (`bad ref`), or GitLab's checks (`pre-receive hook declined`, the check's message shown to
 * the user as `GitLab: …`, as GitLab's hook prints it).
 */
export async function pushRefs(w: Writer, input: PushInput): Promise<void> {
  const { projectId, refs } = input;
  try {
    await runRefs(w, projectId, async (trx): Promise<RepositoryWrite> => {
      // The pushed refs' rows, locked until the commit (a write of another ref waits for none of them).
      const pushedBranches = refs.filter((r) => r.kind === 'branch').map((r) => r.name);
      const pushedTags = refs.filter((r) => r.kind === 'tag').map((r) => r.name);
      const branches = new Map(
        (await sql<{ name: string; sha: string }>`select name, sha from repository_branches where project_id = ${projectId} and name = any(${pushedBranches}::text[]) for update`.execute(trx)).rows.map((r) => [r.name, r.sha]),
      );
      const tags = new Map(
        (await sql<{ name: string; target: string }>`select name, target from repository_tags where project_id = ${projectId} and name = any(${pushedTags}::text[]) for update`.execute(trx)).rows.map((r) => [r.name, r.target]),
      );
      stale(refs, branches, tags);

      const fresh = await storeInBatches(trx, projectId, input.objects);
      const tips = [...new Set(refs.filter((r) => r.action !== 'delete').map((r) => r.newSha))];
      const types = await objectTypes(trx, projectId, tips);
      const bad = new Map<string, string>();
      const commands: RefWrite[] = [];
      const forced = new Set<string>();
      const headsBefore = new Map((await trx.selectFrom('repository_branches').select(['name', 'sha']).where('project_id', '=', projectId).execute()).map((r) => [r.name, r.sha]));
      const createdTips = refs.filter((r) => r.kind === 'branch' && r.action === 'create' && types.get(r.newSha) === 'commit').map((r) => r.newSha);
      const created = await createdBranchCommits(trx, projectId, [...new Set(createdTips)], headsBefore, input.writer.defaultBranch, fresh);
      for (const ref of refs) {
        if (ref.kind === 'branch') {
          if (ref.action === 'delete') {
            commands.push({ type: 'DeleteBranch', branch: ref.name });
            continue;
          }
          if (types.get(ref.newSha) !== 'commit') {
            bad.set(ref.ref, 'bad ref');
            continue;
          }
          if (ref.action === 'create') {
            commands.push({ type: 'CreateBranch', branch: ref.name, sha: ref.newSha, ...moved(created.get(ref.newSha)!) });
          } else {
            if (!(await isAncestor(trx, projectId, ref.oldSha, ref.newSha))) forced.add(ref.name);
            commands.push({ type: 'PushBranch', branch: ref.name, oldSha: ref.oldSha, newSha: ref.newSha, ...moved(await commitsBetween(trx, projectId, ref.oldSha, ref.newSha)) });
          }
          continue;
        }
        if (ref.action !== 'create') commands.push({ type: 'DeleteTag', tag: ref.name });
        if (ref.action === 'delete') continue;
        const peeled = await peel(trx, projectId, ref.newSha);
        if (peeled === null) {
          bad.set(ref.ref, 'bad ref');
          continue;
        }
        commands.push({
          type: 'CreateTag',
          tag: ref.name,
          target: ref.newSha,
          commitSha: peeled.commit,
          message: types.get(ref.newSha) === 'tag' ? peeled.message : null,
          releaseDescription: null,
        });
      }
      if (bad.size > 0) throw new PushRefused(bad, 'atomic push failure', [...bad.keys()].map((ref) => `error: refusing to point ${ref} at an object of the wrong type\n`));
      const command: RepositoryWrite = { type: 'UpdateRefs', commands };
      await checkRefWrites(trx, projectId, input.writer, [command], { forced });
      return command;
    });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // Gitaly's pre-receive hook: GitLab's refusal, every command declined.
    const message = error.text ?? error.messages?.join(' ') ?? error.message;
    throw new PushRefused(new Map(), 'pre-receive hook declined', [...message.split('\n').filter((line) => line.trim() !== '').map((line) => `GitLab: ${line}\n`)]);
  }
}

/** Refuses the push when a ref is not where the client saw it (another push moved it meanwhile). */
function stale(refs: readonly PushedRef[], branches: ReadonlyMap<string, string>, tags: ReadonlyMap<string, string>): void {
  const reasons = new Map<string, string>();
  const messages: string[] = [];
  for (const ref of refs) {
    const current = (ref.kind === 'branch' ? branches : tags).get(ref.name);
    const expected = ref.oldSha === ZERO_SHA ? undefined : ref.oldSha;
    if (current === expected) continue;
    reasons.set(ref.ref, 'failed to update ref');
    // refs/files-backend.c's words for a ref transaction's failed old-value check.
    if (expected === undefined) messages.push(`error: cannot lock ref '${ref.ref}': reference already exists\n`);
    else if (current === undefined) messages.push(`error: cannot lock ref '${ref.ref}': unable to resolve reference '${ref.ref}'\n`);
    else messages.push(`error: cannot lock ref '${ref.ref}': is at ${current} but expected ${expected}\n`);
  }
  if (reasons.size > 0) throw new PushRefused(reasons, 'atomic push failure', messages);
}
