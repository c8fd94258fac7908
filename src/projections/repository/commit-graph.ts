import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { parseCommit } from '../../domain/repository/objects.js';
import { afterCommit, perDatabase } from '../../database/after-commit.js';
import { LruMap } from '../../lru.js';
import { indexPathChanges } from './path-changes.js';

/**
 * The commit graph index (`repository_commits`, migration 0059; git's commit-graph file): a
 * row per commit with its parents, generation number, committer time and the number of
 * commits it reaches. Written with the commit by storeObjects (src/commands/repository.ts),
 * read here a window of generations at a time, and walked as git walks its commit-graph:
 * by generation where the order is free (merge bases, `rev-list a ^b`), by date where git's
 * output order is (the log). See docs/repository.md, "History and merges".
 */

export interface CommitNode {
  readonly sha: string;
  /** As the commit's header names them (a parent not stored is skipped by the walks). */
  readonly parents: readonly string[];
  /** git's topological level: 1 for a root, else 1 + the greatest of its parents'. A commit reaches none of a greater or equal one but itself. */
  readonly generation: number;
  /** Committer time, seconds since the epoch (the date order's key). */
  readonly time: number;
  /** How many commits it reaches, itself included (`git rev-list --count`). */
  readonly ancestors: number;
  /** How many commits its first-parent chain holds, itself included (`git rev-list --count --first-parent`): 1 + its first parent's, 1 if that is not stored. */
  readonly firstParentDepth: number;
}

interface GraphRow {
  sha: string;
  /** Space-separated: a text array costs node-postgres's array parser more than the rest of the row. */
  parents: string;
  generation: number;
  committer_time: string | number;
  ancestors: number;
  first_parent_depth: number;
  floor: number | null;
}

/**
 * Commit graph rows this process has read, by database (databaseKey), project and SHA. A row never changes (the
 * table refuses UPDATE; a commit's SHA fixes its parents and a tip stored in a project has
 * its ancestors stored with it), so a walk takes what it finds here before asking the
 * database: a merge request's opening and a branch list walk the same recent commits of a
 * project again and again. Rows read inside a transaction are kept only once it has
 * committed (afterCommit): it may have read commits of its own that a rollback removes.
 * Bounded (README: Memory): the least recently used row goes first.
 */
export const COMMIT_NODE_CACHE_CAPACITY = 20_000;
const committedNodes = perDatabase(() => new LruMap<string, CommitNode>(COMMIT_NODE_CACHE_CAPACITY));
const nodeKey = (projectId: number, sha: string) => `${projectId} ${sha}`;

/** Empties the cache of `db`'s database: the next walks read it (tests compare walks from a cold and a warm cache). */
export const forgetCommitNodes = committedNodes.forget;

/**
 * A project's commit graph as far as a walk has needed it. Loads are closures cut at a
 * generation: `expand` reads, in one statement, every commit reachable from the unknown
 * parents of the known ones (the frontier) down to `floor`, a window below the highest of
 * them; the window doubles on each load, so a walk of depth d costs O(log d) statements.
 * Promise kept after each load: every commit reachable from a known one with a generation
 * of at least `floor` is known (so an unknown one is lower than `floor`).
 * Every recursive walk here and in history.ts reads a parent through a lateral subquery with
 * `limit 1`: a fence that keeps the planner to one primary key lookup per parent, where a
 * hash join would read all of the project's commits on each call.
 */
export class CommitGraph {
  readonly nodes = new Map<string, CommitNode>();
  /** Unknown parents of known commits. */
  private readonly frontier = new Set<string>();
  /** SHAs asked for that are no commit of this project. */
  private readonly missing = new Set<string>();
  floor = Infinity;
  private readonly cached: LruMap<string, CommitNode>;

  constructor(
    private readonly db: Db,
    private readonly projectId: number,
    private window = 64,
  ) {
    this.cached = committedNodes.of(db);
  }

  get(sha: string): CommitNode | undefined {
    return this.nodes.get(sha);
  }

  /** Could `sha` still be loaded (neither known nor known to be absent)? */
  unknown(sha: string): boolean {
    return !this.nodes.has(sha) && !this.missing.has(sha);
  }

  /** A commit not stored yet (storeObjects computes its row): its unknown parents join the frontier. */
  add(node: CommitNode): void {
    this.nodes.set(node.sha, node);
    this.frontier.delete(node.sha);
    this.missing.delete(node.sha);
    for (const parent of node.parents) {
      if (!this.unknown(parent)) continue;
      this.frontier.add(parent);
      this.floor = Infinity;
    }
  }

  private remember(node: CommitNode): void {
    this.nodes.set(node.sha, node);
    this.frontier.delete(node.sha);
    for (const parent of node.parents) if (this.unknown(parent)) this.frontier.add(parent);
  }

  /**
   * Loads the frontier and `extra` and their ancestors down a window: first what the cache
   * holds (fromCache), then, in one statement, from the anchors the cache did not hold.
   */
  async expand(extra: readonly string[] = []): Promise<void> {
    const anchors = new Set(this.frontier);
    for (const sha of extra) if (this.unknown(sha)) anchors.add(sha);
    if (anchors.size === 0) return;
    const cachedFloor = this.fromCache(anchors);
    const list = [...anchors];
    if (list.length === 0) {
      this.floor = cachedFloor!;
      this.window = Math.min(this.window * 2, 1 << 24);
      return;
    }
    const columns = sql`c.sha, c.parents, c.generation, c.committer_time, c.ancestors, c.first_parent_depth`;
    const { rows } = await sql<GraphRow>`
      with recursive anchor as (
        select ${columns} from repository_commits c where c.project_id = ${this.projectId} and c.sha = any(${list}::text[])
      ), bound as (select max(generation) - ${this.window}::int as floor from anchor),
      walk as (
        select * from anchor
        union
        select ${columns} from walk w
          cross join lateral unnest(w.parents) as p(sha)
          cross join lateral (select * from repository_commits c where c.project_id = ${this.projectId} and c.sha = p.sha limit 1) c
         where c.generation >= (select floor from bound)
      )
      select sha, array_to_string(parents, ' ') as parents, generation, committer_time, ancestors, first_parent_depth, (select floor from bound) as floor from walk`.execute(this.db);
    const read: CommitNode[] = [];
    for (const row of rows) {
      if (this.nodes.has(row.sha)) continue;
      const node = { sha: row.sha, parents: row.parents === '' ? [] : row.parents.split(' '), generation: row.generation, time: Number(row.committer_time), ancestors: row.ancestors, firstParentDepth: row.first_parent_depth };
      this.remember(node);
      read.push(node);
    }
    const [projectId, cached] = [this.projectId, this.cached];
    afterCommit(this.db, () => {
      for (const node of read) cached.set(nodeKey(projectId, node.sha), node);
    });
    for (const sha of list) {
      if (this.nodes.has(sha)) continue;
      this.missing.add(sha);
      this.frontier.delete(sha);
    }
    // What is still unknown is below the statement's floor or below the cache's (fromCache).
    if (rows.length > 0) this.floor = Math.max(Number(rows[0]!.floor), cachedFloor ?? -Infinity);
    else if (cachedFloor !== undefined) this.floor = cachedFloor;
    this.window = Math.min(this.window * 2, 1 << 24);
  }

  /**
   * The statement's walk, from the cache: the anchors it holds and their ancestors it holds
   * down to the window below the highest of those anchors. Takes the anchors it found out of
   * `anchors`, and adds to them every parent it met that it does not hold (the statement
   * loads those). Returns the window's floor, undefined when it held no anchor: every commit
   * reachable from one it loaded with a generation of at least the floor is now known or
   * among `anchors`.
   */
  private fromCache(anchors: Set<string>): number | undefined {
    // The anchors held, each looked up once (a look-up moves the entry in the LRU order).
    const held = new Map<string, CommitNode>();
    let highest = -Infinity;
    for (const sha of anchors) {
      const node = this.cached.get(nodeKey(this.projectId, sha));
      if (node === undefined) continue;
      held.set(sha, node);
      highest = Math.max(highest, node.generation);
    }
    if (held.size === 0) return undefined;
    const floor = highest - this.window;
    const stack = [...anchors];
    while (stack.length > 0) {
      const sha = stack.pop()!;
      if (!this.unknown(sha)) continue;
      const anchor = held.get(sha);
      const node = anchor ?? (anchors.has(sha) ? undefined : this.cached.get(nodeKey(this.projectId, sha)));
      if (node === undefined) {
        anchors.add(sha);
        continue;
      }
      // An anchor is loaded whatever its generation; a parent only within the window (as the statement's walk).
      if (anchor === undefined && node.generation < floor) continue;
      anchors.delete(sha);
      this.remember(node);
      for (const parent of node.parents) if (this.unknown(parent)) stack.push(parent);
    }
    return floor;
  }

  /** Makes sure each of `shas` is loaded if it is a commit of the project. */
  async load(shas: readonly string[]): Promise<void> {
    if (shas.some((sha) => this.unknown(sha))) await this.expand(shas);
  }
}

// ───────────────────────────── Queues ─────────────────────────────

/** A binary heap: `before(a, b)` when a is taken first. */
export class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  values(): readonly T[] {
    return this.items;
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    for (let i = items.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!this.before(items[i]!, items[up]!)) break;
      [items[up], items[i]] = [items[i]!, items[up]!];
      i = up;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      for (let i = 0; ; ) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let best = i;
        if (l < items.length && this.before(items[l]!, items[best]!)) best = l;
        if (r < items.length && this.before(items[r]!, items[best]!)) best = r;
        if (best === i) break;
        [items[best], items[i]] = [items[i]!, items[best]!];
        i = best;
      }
    }
    return top;
  }
}

/**
 * git's generation-ordered queue (compare_commits_by_gen_then_commit_date): the highest
 * generation first, then the newest. SHAs not loaded yet wait aside; the graph's promise
 * (an unknown commit is below `floor`) says when the next one may be among them, and then
 * they are loaded together.
 */
export class GenerationQueue {
  private readonly heap = new Heap<CommitNode>((a, b) => a.generation > b.generation || (a.generation === b.generation && a.time > b.time));
  private pending: string[] = [];

  constructor(private readonly graph: CommitGraph) {}

  get size(): number {
    return this.heap.size + this.pending.length;
  }

  /** Every SHA queued (duplicates included). */
  *entries(): Iterable<string> {
    for (const node of this.heap.values()) yield node.sha;
    yield* this.pending;
  }

  push(sha: string): void {
    const node = this.graph.get(sha);
    if (node) this.heap.push(node);
    else if (this.graph.unknown(sha)) this.pending.push(sha);
  }

  async pop(): Promise<CommitNode | undefined> {
    for (;;) {
      const top = this.heap.peek();
      if (this.pending.length === 0 || (top !== undefined && top.generation >= this.graph.floor)) return this.heap.pop();
      const waiting = this.pending;
      this.pending = [];
      await this.graph.expand(waiting);
      for (const sha of waiting) this.push(sha);
    }
  }
}

/**
 * git's date order (rev-list without --topo-order): a queue by committer date, newest first,
 * ties first in first out (commit_list_insert_by_date); each commit once, its parents queued
 * when it is shown, and only those `enter` allows. Yields as it goes: a caller that stops
 * early has loaded only what it was shown (and a window below).
 */
export async function* dateOrder(graph: CommitGraph, tips: readonly string[], enter: (sha: string) => boolean = () => true, firstParent = false): AsyncGenerator<CommitNode> {
  let sequence = 0;
  const queue = new Heap<{ node: CommitNode; seq: number }>((a, b) => a.node.time > b.node.time || (a.node.time === b.node.time && a.seq < b.seq));
  const seen = new Set<string>();
  await graph.load(tips);
  for (const sha of tips) {
    const node = graph.get(sha);
    if (!node || seen.has(sha)) continue;
    seen.add(sha);
    queue.push({ node, seq: sequence++ });
  }
  while (queue.size > 0) {
    const { node } = queue.pop()!;
    // `--first-parent`: only the first parent of each commit is walked.
    const parents = firstParent ? node.parents.slice(0, 1) : node.parents;
    await graph.load(parents.filter((parent) => !seen.has(parent)));
    for (const parent of parents) {
      const found = graph.get(parent);
      if (seen.has(parent) || !found || !enter(parent)) continue;
      seen.add(parent);
      queue.push({ node: found, seq: sequence++ });
    }
    yield node;
  }
}

// ───────────────────────────── Walks by generation ─────────────────────────────

const UNINTERESTING = 1;
const INTERESTING = 2;

/**
 * `git rev-list include ^exclude` as a set: the commits reachable from `include` and not from
 * `exclude`. Walked by generation from both sides at once, so each commit's marks are final
 * when it is taken (its children, all higher, went first), and stopped as soon as nothing
 * interesting is queued: only the commits down to where the two sides meet are read.
 * `cut`: commits whose parents are not walked (a shallow client's grafts: upload-pack's
 * register_shallow); `admit`: an interesting commit it refuses is left out with what only it
 * leads to (rev-list's `--max-age`).
 */
export async function reachableOnlyFrom(
  graph: CommitGraph,
  include: readonly string[],
  exclude: readonly string[],
  options: { readonly cut?: ReadonlySet<string>; readonly admit?: (node: CommitNode) => boolean } = {},
): Promise<Set<string>> {
  await graph.load([...include, ...exclude]);
  const flags = new Map<string, number>();
  const queue = new GenerationQueue(graph);
  let interesting = 0;
  const mark = (sha: string, flag: number) => {
    if (!graph.get(sha) && !graph.unknown(sha)) return;
    const had = flags.get(sha) ?? 0;
    if (had & UNINTERESTING || (flag === INTERESTING && had !== 0)) return;
    flags.set(sha, had | flag);
    if (had === 0) queue.push(sha);
    if (flag === INTERESTING) interesting++;
    else if (had & INTERESTING) interesting--;
  };
  for (const sha of include) mark(sha, INTERESTING);
  for (const sha of exclude) mark(sha, UNINTERESTING);
  const out = new Set<string>();
  while (interesting > 0) {
    const node = await queue.pop();
    if (!node) break;
    const parents = options.cut?.has(node.sha) ? [] : node.parents;
    if (flags.get(node.sha)! & UNINTERESTING) {
      for (const parent of parents) mark(parent, UNINTERESTING);
    } else {
      interesting--;
      if (options.admit && !options.admit(node)) continue;
      out.add(node.sha);
      for (const parent of parents) mark(parent, INTERESTING);
    }
  }
  return out;
}

const PARENT1 = 1;
const PARENT2 = 2;
const STALE = 4;
const RESULT = 8;

/**
 * git's paint_down_to_common: `one` painted PARENT1, `twos` PARENT2, down by generation; a
 * commit with both paints is a common ancestor (and its ancestors stale); the walk ends when
 * every queued commit is stale. Returns the common ancestors found that did not go stale.
 */
export async function paintDownToCommon(graph: CommitGraph, one: string, twos: readonly string[]): Promise<string[]> {
  const flags = new Map<string, number>();
  const queue = new GenerationQueue(graph);
  const paint = (sha: string, flag: number) => {
    flags.set(sha, (flags.get(sha) ?? 0) | flag);
    queue.push(sha);
  };
  paint(one, PARENT1);
  for (const two of twos) paint(two, PARENT2);
  const result: string[] = [];
  const nonStale = () => {
    for (const sha of queue.entries()) if (!(flags.get(sha)! & STALE)) return true;
    return false;
  };
  while (nonStale()) {
    const node = await queue.pop();
    if (!node) break;
    let painted = flags.get(node.sha)! & (PARENT1 | PARENT2 | STALE);
    if (painted === (PARENT1 | PARENT2)) {
      if (!(flags.get(node.sha)! & RESULT)) {
        flags.set(node.sha, flags.get(node.sha)! | RESULT);
        result.push(node.sha);
      }
      painted |= STALE;
    }
    for (const parent of node.parents) {
      const had = flags.get(parent) ?? 0;
      if ((had & painted) === painted) continue;
      flags.set(parent, had | painted);
      queue.push(parent);
    }
  }
  return result.filter((sha) => !(flags.get(sha)! & STALE));
}

/** git's remove_redundant: of `candidates`, those that are not an ancestor of another one. */
export async function removeRedundant(graph: CommitGraph, candidates: readonly string[]): Promise<string[]> {
  if (candidates.length < 2) return [...candidates];
  const lowest = Math.min(...candidates.map((sha) => graph.get(sha)!.generation));
  const reached = new Set<string>();
  const queue = new GenerationQueue(graph);
  for (const sha of candidates) for (const parent of graph.get(sha)!.parents) queue.push(parent);
  for (let node = await queue.pop(); node; node = await queue.pop()) {
    if (reached.has(node.sha) || node.generation < lowest) continue;
    reached.add(node.sha);
    for (const parent of node.parents) if (!reached.has(parent)) queue.push(parent);
  }
  return candidates.filter((sha) => !reached.has(sha));
}

// ───────────────────────────── Writing ─────────────────────────────

/**
 * Indexes commit objects stored in this transaction (or about to be): their rows of the
 * commit graph (graphRows) and of the per-path change index (path-changes.ts), in pages; a
 * commit already indexed stays as it is. `objects` are the objects stored with them, whose
 * trees the change index reads before the database's. Returns the commits it indexed (those
 * new to the repository).
 */
export async function indexCommits(
  db: Db,
  projectId: number,
  commits: readonly { readonly sha: string; readonly content: Uint8Array }[],
  objects: ReadonlyMap<string, { readonly type: string; readonly content: Uint8Array }> = new Map(),
): Promise<string[]> {
  const rows = await graphRows(
    db,
    projectId,
    commits.map((c) => {
      const parsed = parseCommit(c.content);
      return { sha: c.sha, parents: parsed.parents, time: parsed.committer.time };
    }),
  );
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto('repository_commits')
      .values(rows.slice(i, i + 1000).map((r) => ({ project_id: projectId, sha: r.sha, parents: [...r.parents], generation: r.generation, committer_time: r.time, ancestors: r.ancestors, first_parent_depth: r.firstParentDepth })))
      .onConflict((oc) => oc.columns(['project_id', 'sha']).doNothing())
      .execute();
  }
  const indexed = rows.map((r) => r.sha);
  await indexPathChanges(db, projectId, indexed, objects);
  return indexed;
}

export interface NewCommit {
  readonly sha: string;
  readonly parents: readonly string[];
  readonly time: number;
}

/**
 * The graph rows of commits about to be stored, those already indexed left out: parents
 * first (a commit's parents are stored before it or with it), each one's generation from its
 * parents', its count from its first parent's plus what the others bring
 * (`rev-list --count p2… ^p1`, a walk down to where they meet).
 */
export async function graphRows(db: Db, projectId: number, commits: readonly NewCommit[]): Promise<CommitNode[]> {
  if (commits.length === 0) return [];
  const graph = new CommitGraph(db, projectId, 16);
  const batch = new Map(commits.map((c) => [c.sha, c]));
  await graph.load([...batch.keys(), ...commits.flatMap((c) => c.parents.filter((p) => !batch.has(p)))]);
  const rows: CommitNode[] = [];
  const done = new Set<string>();
  for (const first of commits) {
    const stack = [first.sha];
    while (stack.length > 0) {
      const sha = stack[stack.length - 1]!;
      const commit = batch.get(sha)!;
      if (done.has(sha) || graph.get(sha)) {
        done.add(sha);
        stack.pop();
        continue;
      }
      const pending = commit.parents.filter((p) => batch.has(p) && !done.has(p) && !graph.get(p));
      if (pending.length > 0) {
        stack.push(...pending);
        continue;
      }
      stack.pop();
      done.add(sha);
      const known = commit.parents.filter((p) => graph.get(p));
      const generation = 1 + Math.max(0, ...known.map((p) => graph.get(p)!.generation));
      let ancestors = 1;
      if (known.length > 0) ancestors += graph.get(known[0]!)!.ancestors;
      if (known.length > 1) ancestors += (await reachableOnlyFrom(graph, known.slice(1), [known[0]!])).size;
      const firstParentDepth = 1 + (commit.parents[0] === undefined ? 0 : (graph.get(commit.parents[0])?.firstParentDepth ?? 0));
      const node: CommitNode = { sha, parents: commit.parents, generation, time: commit.time, ancestors, firstParentDepth };
      graph.add(node);
      rows.push(node);
    }
  }
  return rows;
}
