import { sql, type CompiledQuery } from 'kysely';
import { afterCommit, perDatabase } from '../../database/after-commit.js';
import type { Db } from '../../database/database.js';
import { WeightedLruMap } from '../../lru.js';
import { DIFF_LIMITS, type DiffEntry, diffEntries, type DiffLimits, type FileChange, limitDiffs, neededBlobs, treeChanges } from '../../domain/repository/diffs.js';
import type { FileEntry } from '../../domain/repository/files.js';
import { type Commit, type Mode, MODES, parseCommit, parseTree, type TreeEntry } from '../../domain/repository/objects.js';
import { type ProtectedRef, type ProtectedRefRule, type Pusher, ruleGroupIds } from '../../domain/repository/push-access.js';
import type { RepositoryBranchRow, RepositoryObjectsTable } from './tables.js';
import { CommitGraph, type CommitNode, dateOrder } from './commit-graph.js';
import { expectedCommitIndex, indexedPath, pathKey } from './path-changes.js';

/** The repository's reads: branches, objects, commits and their history, trees and paths. */

/** Gitaly's order of branch names (FindLocalBranches, SortBy NAME): by their bytes, whatever the database's collation. */
export const BRANCH_NAME_ORDER = sql`name collate "C"`;

/** A project's branches, those whose name holds `search` when given; ordered by BRANCH_NAME_ORDER where read (listBranches, or a page of them). */
export function branchesOf(db: Db, projectId: number, search?: string) {
  const query = db.selectFrom('repository_branches').selectAll().where('project_id', '=', projectId);
  // BranchesFinder (12.x): a case-insensitive substring of the name.
  return search ? query.where(sql<boolean>`strpos(lower(name), ${search.toLowerCase()}) > 0`) : query;
}

export async function listBranches(db: Db, projectId: number, search?: string): Promise<RepositoryBranchRow[]> {
  return branchesOf(db, projectId, search).orderBy(BRANCH_NAME_ORDER).execute();
}

export async function findBranch(db: Db, projectId: number, name: string): Promise<RepositoryBranchRow | undefined> {
  return db.selectFrom('repository_branches').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
}

export async function findObject(db: Db, projectId: number, sha: string): Promise<Pick<RepositoryObjectsTable, 'sha' | 'type' | 'content'> | undefined> {
  const row = await db.selectFrom('repository_objects').select(['sha', 'type', 'content']).where('project_id', '=', projectId).where('sha', '=', sha).executeTakeFirst();
  return row && { ...row, content: new Uint8Array(row.content) };
}

export interface CommitView extends Commit {
  readonly sha: string;
}

export async function findCommit(db: Db, projectId: number, sha: string): Promise<CommitView | undefined> {
  return (await findCommits(db, projectId, [sha]))[0];
}

/**
 * Parsed commits the reads have read, by database (databaseKey), project and SHA, bounded by
 * an estimate of their bytes (README: Memory). A commit never changes with its SHA; the branch
 * list, a single commit and the logs show the same branch heads and recent commits again and
 * again, and parsing them was a tenth of the branch list's CPU. Kept only once the transaction
 * that read them has committed (afterCommit): it may have read commits of its own that a
 * rollback removes.
 */
export const COMMIT_CACHE_BYTES = 8 * 1024 * 1024;
/** A parsed commit's strings take about twice the bytes of its object, plus the fields around them. */
const commitWeight = (bytes: number) => 2 * bytes + 200;
const committedCommits = perDatabase(() => new WeightedLruMap<string, CommitView>(COMMIT_CACHE_BYTES));

/** Empties the commit cache of `db`'s database (tests). */
export const forgetCommits = committedCommits.forget;

/** Commits by SHA, in the order asked, those the process has not kept read in one query; a SHA that names no commit is left out. */
export async function findCommits(db: Db, projectId: number, shas: readonly string[]): Promise<CommitView[]> {
  if (shas.length === 0) return [];
  const cache = committedCommits.of(db);
  const found = new Map<string, CommitView>();
  for (const sha of shas) {
    const commit = cache.get(`${projectId} ${sha}`);
    if (commit) found.set(sha, commit);
  }
  const unread = [...new Set(shas.filter((sha) => !found.has(sha)))];
  if (unread.length > 0) {
    const read: [CommitView, number][] = [];
    for (const row of await commitRows(db, projectId).where('sha', 'in', unread).execute()) {
      // Frozen: the same object goes to every reader of the process from now on.
      const commit = Object.freeze(commitOfRow(row.sha, row.content));
      found.set(row.sha, commit);
      read.push([commit, row.content.length]);
    }
    afterCommit(db, () => {
      for (const [commit, bytes] of read) cache.set(`${projectId} ${commit.sha}`, commit, commitWeight(bytes));
    });
  }
  return shas.flatMap((sha) => found.get(sha) ?? []);
}

/** A project's stored commit rows, for a caller to narrow by SHA; commitsIn orders and parses them. */
export const commitRows = (db: Db, projectId: number) =>
  db.selectFrom('repository_objects').select(['sha', 'content']).where('project_id', '=', projectId).where('type', '=', 'commit');

/** The commits `shas` names among stored commit rows, in the order of `shas`; a SHA without its row is left out. */
export function commitsIn(shas: readonly string[], rows: readonly { sha: string; content: Uint8Array }[]): CommitView[] {
  const found = new Map(rows.map((row) => [row.sha, row.content]));
  return shas.flatMap((sha) => {
    const content = found.get(sha);
    return content === undefined ? [] : [commitOfRow(sha, content)];
  });
}

const commitOfRow = (sha: string, content: Uint8Array): CommitView => ({ sha, ...parseCommit(new Uint8Array(content)) });

/**
 * A ref as GitLab's `repository.commit(ref)` takes it, in git's order of resolution
 * (rev-parse: a tag before a branch of the same name): `refs/tags/<tag>`, `refs/heads/<branch>`,
 * a tag (its commit), a branch, else a commit's SHA or an unambiguous prefix of one (at
 * least 4 hex digits).
 */
export async function resolveCommit(db: Db, projectId: number, ref: string): Promise<CommitView | undefined> {
  const named = await namedCommit(db, projectId, ref);
  if (named) return findCommit(db, projectId, named);
  if (!/^[0-9a-f]{4,40}$/i.test(ref)) return undefined;
  const prefix = ref.toLowerCase();
  const rows = await db
    .selectFrom('repository_objects')
    .select('sha')
    .where('project_id', '=', projectId)
    .where('type', '=', 'commit')
    .where('sha', '>=', prefix)
    .where('sha', '<=', `${prefix}g`)
    .limit(2)
    .execute();
  return rows.length === 1 ? findCommit(db, projectId, rows[0]!.sha) : undefined;
}

/** The commit a tag or branch name resolves to (resolveCommit's names, not a SHA), without reading the commit. */
export async function namedCommit(db: Db, projectId: number, ref: string): Promise<string | undefined> {
  const tagName = ref.startsWith('refs/tags/') ? ref.slice('refs/tags/'.length) : ref.startsWith('refs/heads/') ? null : ref;
  const branchName = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref.startsWith('refs/tags/') ? null : ref;
  const { rows } = await sql<{ sha: string }>`
    select commit_sha as sha, 0 as rank from repository_tags where project_id = ${projectId} and name = ${tagName}
    union all
    select sha, 1 from repository_branches where project_id = ${projectId} and name = ${branchName}
    order by rank limit 1`.execute(db);
  return rows[0]?.sha;
}

export async function readTree(db: Db, projectId: number, sha: string): Promise<TreeEntry[] | undefined> {
  const object = await findObject(db, projectId, sha);
  return object?.type === 'tree' ? parseTree(object.content) : undefined;
}

/** The entry a path names in a tree ('' is the tree itself), or undefined. */
export async function entryAt(db: Db, projectId: number, treeSha: string, path: string): Promise<TreeEntry | undefined> {
  const parts = path.split('/').filter((p) => p !== '');
  let entry: TreeEntry = { mode: MODES.tree, name: '', sha: treeSha };
  for (const part of parts) {
    if (entry.mode !== MODES.tree) return undefined;
    const found = (await readTree(db, projectId, entry.sha))?.find((e) => e.name === part);
    if (!found) return undefined;
    entry = found;
  }
  return entry;
}

/**
 * Every tree below `treeSha` (itself included) by SHA, read a level at a time: one query per
 * depth of the tree (per 1,000 trees of a level), not one per tree. A tree not stored is absent.
 */
export async function loadTrees(db: Db, projectId: number, treeSha: string): Promise<Map<string, TreeEntry[]>> {
  const trees = new Map<string, TreeEntry[]>();
  let level = [treeSha];
  while (level.length > 0) {
    for (const [sha, entries] of await readTrees(db, projectId, level)) trees.set(sha, entries);
    const next = new Set<string>();
    for (const sha of level) for (const entry of trees.get(sha) ?? []) if (entry.mode === MODES.tree && !trees.has(entry.sha)) next.add(entry.sha);
    level = [...next];
  }
  return trees;
}

/** Trees by SHA, one query per 1,000; a tree not stored is absent. */
export function readTrees(db: Db, projectId: number, shas: readonly string[]): Promise<Map<string, TreeEntry[]>> {
  return new ObjectReader(db, projectId).trees(shas);
}

/** An object as the reader keeps it. */
interface StoredObject {
  readonly type: string;
  readonly content: Uint8Array;
}

/**
 * Parsed trees the readers have read, by database (databaseKey), project and SHA, bounded by an estimate of their
 * bytes (README: Memory). An object never changes with its SHA; a merge request's opening,
 * its merge check and the file reads walk the same trees of a branch's recent commits again
 * and again. Kept only once the transaction that read them has committed (afterCommit), as
 * the commit graph's rows are.
 */
export const TREE_CACHE_BYTES = 16 * 1024 * 1024;
/** A parsed entry (an object, its name and the SHA in hex) takes about five times its ~30 bytes in the tree. */
const TREE_WEIGHT_PER_BYTE = 5;
const committedTrees = perDatabase(() => new WeightedLruMap<string, TreeEntry[]>(TREE_CACHE_BYTES));

/** Empties the tree cache of `db`'s database (tests compare reads from a cold and a warm one). */
export const forgetTrees = committedTrees.forget;

/**
 * A project's objects as one command reads them: each read once, trees parsed once, and a
 * commit's root tree read with it (the next thing a diff or a merge reads). With `together`,
 * the reads asked for while others wait on the database go out as one statement, sent once the
 * asking code has run as far as it can (setImmediate): the diff of a merge request's version
 * and the merge check of its heads walk the same trees a level at a time, and side by side a
 * level of both costs one round trip (each costs Node ~0.2 ms of CPU in the socket write
 * alone). Without it, each call's objects are read at once, in one statement.
 */
export class ObjectReader {
  private readonly read = new Map<string, Promise<StoredObject | undefined>>();
  private readonly parsed = new Map<string, TreeEntry[]>();
  private waiting: { sha: string; withTree: boolean; found: (object: StoredObject | undefined) => void; failed: (error: unknown) => void }[] = [];
  private readonly cachedTrees: WeightedLruMap<string, TreeEntry[]>;

  constructor(
    private readonly db: Db,
    private readonly projectId: number,
    private readonly together = false,
  ) {
    this.cachedTrees = committedTrees.of(db);
  }

  /** Commits by SHA in the order asked; a SHA that names no commit is left out (findCommits). */
  async commits(shas: readonly string[]): Promise<CommitView[]> {
    const objects = await this.objects(shas, true);
    return shas.flatMap((sha, i) => {
      const object = objects[i];
      return object?.type === 'commit' ? [{ sha, ...parseCommit(object.content) }] : [];
    });
  }

  /** Trees by SHA; a tree not stored is absent. Parsed trees are kept by the process (committedTrees). */
  async trees(shas: readonly string[]): Promise<Map<string, TreeEntry[]>> {
    const unread = shas.filter((sha) => !this.parsed.has(sha) && !this.fromCache(sha));
    const objects = unread.length === 0 ? [] : await this.objects(unread);
    const kept: [string, TreeEntry[], number][] = [];
    for (const [i, sha] of unread.entries()) {
      const object = objects[i];
      if (object?.type !== 'tree' || this.parsed.has(sha)) continue;
      // Frozen: the same array goes to every reader of the process from now on.
      const entries = Object.freeze(parseTree(object.content).map((entry) => Object.freeze(entry))) as TreeEntry[];
      this.parsed.set(sha, entries);
      kept.push([sha, entries, object.content.length]);
    }
    if (kept.length > 0) {
      const [projectId, cached] = [this.projectId, this.cachedTrees];
      afterCommit(this.db, () => {
        for (const [sha, entries, bytes] of kept) cached.set(`${projectId} ${sha}`, entries, bytes * TREE_WEIGHT_PER_BYTE);
      });
    }
    const trees = new Map<string, TreeEntry[]>();
    for (const sha of shas) {
      const entries = this.parsed.get(sha);
      if (entries) trees.set(sha, entries);
    }
    return trees;
  }

  /** Takes a tree the process has kept into this reader's parsed trees. */
  private fromCache(sha: string): boolean {
    const entries = this.cachedTrees.get(`${this.projectId} ${sha}`);
    if (entries) this.parsed.set(sha, entries);
    return entries !== undefined;
  }

  /** Objects' contents by SHA, whatever their type. */
  async blobs(shas: readonly string[]): Promise<Map<string, Uint8Array>> {
    const objects = await this.objects(shas);
    const contents = new Map<string, Uint8Array>();
    for (const [i, sha] of shas.entries()) {
      const object = objects[i];
      if (object) contents.set(sha, object.content);
    }
    return contents;
  }

  private objects(shas: readonly string[], withTree = false): Promise<(StoredObject | undefined)[]> {
    const asked = shas.map((sha) => {
      let object = this.read.get(sha);
      if (!object) {
        object = new Promise((found, failed) => this.waiting.push({ sha, withTree, found, failed }));
        this.read.set(sha, object);
        if (this.together && this.waiting.length === 1) setImmediate(() => void this.send());
      }
      return object;
    });
    if (!this.together) void this.send();
    return Promise.all(asked);
  }

  /** The objects waiting, in one statement per 1,000 (a statement takes at most 65,535 parameters). */
  private async send(): Promise<void> {
    const waiting = this.waiting;
    this.waiting = [];
    for (let i = 0; i < waiting.length; i += 1000) {
      const chunk = waiting.slice(i, i + 1000);
      const withTrees = chunk.filter((w) => w.withTree).map((w) => w.sha);
      try {
        // A commit's content starts with `tree <sha>` (git writes it first): its root tree is joined by that SHA.
        const { rows } = await sql<{ sha: string; type: string; content: Uint8Array }>`
          select sha, type, content from repository_objects where project_id = ${this.projectId} and sha = any(${chunk.map((w) => w.sha)}::text[])
          ${withTrees.length === 0 ? sql`` : sql`union all
          select t.sha, t.type, t.content from repository_objects c
            join repository_objects t on t.project_id = c.project_id and t.sha = encode(substring(c.content from 6 for 40), 'escape')
           where c.project_id = ${this.projectId} and c.sha = any(${withTrees}::text[]) and c.type = 'commit'`}`.execute(this.db);
        const found = new Map(rows.map((row) => [row.sha, { type: row.type, content: new Uint8Array(row.content) }]));
        for (const w of chunk) w.found(found.get(w.sha));
        for (const [sha, object] of found) if (!this.read.has(sha)) this.read.set(sha, Promise.resolve(object));
      } catch (error) {
        for (const w of waiting.slice(i)) w.failed(error);
        return;
      }
    }
  }
}

/**
 * The files that differ between two trees (null: the empty tree), each side's entry of them:
 * the trees are compared a level at a time (one query per level) and a subtree whose SHA is
 * the same on both sides is never read, so the cost is that of the change, not of the
 * repository. What treeChanges and a numstat need, since they skip the files both sides share.
 */
export async function changedFiles(
  db: Db,
  projectId: number,
  fromTree: string | null,
  toTree: string | null,
  objects = new ObjectReader(db, projectId),
): Promise<{ before: Map<string, FileEntry>; after: Map<string, FileEntry> }> {
  const before = new Map<string, FileEntry>();
  const after = new Map<string, FileEntry>();
  let level: { prefix: string; from: string | null; to: string | null }[] = fromTree === toTree ? [] : [{ prefix: '', from: fromTree, to: toTree }];
  while (level.length > 0) {
    const trees = await objects.trees(level.flatMap(({ from, to }) => [from, to].filter((sha): sha is string => sha !== null)));
    const next: typeof level = [];
    for (const { prefix, from, to } of level) {
      const old = new Map((from === null ? [] : (trees.get(from) ?? [])).map((e) => [e.name, e]));
      const now = new Map((to === null ? [] : (trees.get(to) ?? [])).map((e) => [e.name, e]));
      for (const name of new Set([...old.keys(), ...now.keys()])) {
        const [o, n] = [old.get(name), now.get(name)];
        if (o && n && o.sha === n.sha && o.mode === n.mode) continue;
        const path = `${prefix}${name}`;
        const [oTree, nTree] = [o?.mode === MODES.tree, n?.mode === MODES.tree];
        if (oTree || nTree) next.push({ prefix: `${path}/`, from: oTree ? o!.sha : null, to: nTree ? n!.sha : null });
        if (o && !oTree) before.set(path, { mode: o.mode as Mode, sha: o.sha });
        if (n && !nTree) after.set(path, { mode: n.mode as Mode, sha: n.sha });
      }
    }
    level = next;
  }
  return { before, after };
}

/** The files of a tree, recursively, as a flat map (its trees read by loadTrees). */
export async function readFiles(db: Db, projectId: number, treeSha: string): Promise<Map<string, FileEntry>> {
  const trees = await loadTrees(db, projectId, treeSha);
  const files = new Map<string, FileEntry>();
  const visit = (sha: string, prefix: string) => {
    for (const entry of trees.get(sha) ?? []) {
      const path = `${prefix}${entry.name}`;
      if (entry.mode === MODES.tree) visit(entry.sha, `${path}/`);
      else files.set(path, { mode: entry.mode as Mode, sha: entry.sha });
    }
  };
  visit(treeSha, '');
  return files;
}

export interface LogFilters {
  readonly path?: string | undefined;
  /** Seconds since the epoch, inclusive (GitLab: since / until on the committer date). */
  readonly after?: number | undefined;
  readonly before?: number | undefined;
  /** `--no-merges`: commits with more than one parent are left out. */
  readonly skipMerges?: boolean;
  /** `--max-count`: the walk stops once this many commits are kept. */
  readonly limit?: number;
  /** `--first-parent`: only each commit's first parent is walked (with a path, a commit is shown when the path differs from its first parent's). */
  readonly firstParent?: boolean | undefined;
}

/**
 * The history from a commit, newest committer date first (git log's default order: the
 * commits reachable from it, each once), filtered as GitLab's `repository.commits`. Given
 * several heads (`git log --all`: every branch's), the history of them all. Walked on the
 * commit graph index, which loads a window of generations per statement; the commits kept
 * are read in one statement per 1,000. With `path` (git log -- path), the path's changes of
 * the per-path change index the heads reach (src/projections/repository/path-changes.ts).
 */
export async function commitLog(db: Db, projectId: number, head: CommitView | readonly CommitView[], filters: LogFilters = {}): Promise<CommitView[]> {
  const heads = 'sha' in head ? [head] : head;
  const limit = filters.limit ?? Infinity;
  if (filters.path !== undefined && filters.path !== '') {
    const shas = filters.firstParent ? await firstParentPathLog(db, projectId, heads.map((one) => one.sha), filters.path, filters) : await pathLog(db, projectId, heads.map((one) => one.sha), filters.path, filters);
    return readCommits(db, projectId, Number.isFinite(limit) ? shas.slice(0, limit) : shas);
  }
  const graph = new CommitGraph(db, projectId, Math.min(Number.isFinite(limit) ? limit : 256, 256));
  const kept: string[] = [];
  for await (const node of dateOrder(graph, heads.map((one) => one.sha), undefined, filters.firstParent)) {
    if (kept.length >= limit) break;
    if (keeps(node, filters)) kept.push(node.sha);
  }
  return readCommits(db, projectId, kept);
}

/** Commits by SHA in the order given, read in one statement per 1,000. */
async function readCommits(db: Db, projectId: number, shas: readonly string[]): Promise<CommitView[]> {
  const commits: CommitView[] = [];
  for (let i = 0; i < shas.length; i += 1000) commits.push(...(await findCommits(db, projectId, shas.slice(i, i + 1000))));
  return commits;
}

/** The filters of a log but the path: merges, since and until. */
const keeps = (node: Pick<CommitNode, 'parents' | 'time'>, filters: LogFilters) =>
  !(filters.skipMerges && node.parents.length > 1) &&
  !(filters.after !== undefined && node.time < filters.after) &&
  !(filters.before !== undefined && node.time > filters.before);

/**
 * A page of `commitLog` (`offset`, `limit`) and the length of the whole log (X-Total, as
 * GitLab 12 counts it: `commit_count_for_ref`, or `count_commits` with filters).
 * Without `path`, the page is the first `offset + limit` commits of the date walk on the
 * commit graph index: rows read grow with the page's end (O(page × per page)) and not with
 * the history; statements with its logarithm. The count of one head's log is its
 * `ancestors`; with `since`, `until` or several heads it is counted in PostgreSQL, one
 * recursive statement over the history (as `git rev-list --count` walks it). With `path`,
 * the log is the path's changes that the heads reach (pathLog), and its length the count.
 */
export async function commitLogPage(
  db: Db,
  projectId: number,
  head: CommitView | readonly CommitView[],
  filters: LogFilters,
  page: { readonly offset: number; readonly limit: number },
): Promise<{ commits: CommitView[]; total: number }> {
  const heads = 'sha' in head ? [head] : head;
  if (filters.path !== undefined && filters.path !== '') {
    const shas = filters.firstParent ? await firstParentPathLog(db, projectId, heads.map((one) => one.sha), filters.path, filters) : await pathLog(db, projectId, heads.map((one) => one.sha), filters.path, filters);
    return { commits: await findCommits(db, projectId, shas.slice(page.offset, page.offset + page.limit)), total: shas.length };
  }
  const end = page.offset + page.limit;
  const graph = new CommitGraph(db, projectId, Math.max(64, end));
  const kept: string[] = [];
  let exhausted = true;
  for await (const node of dateOrder(graph, heads.map((one) => one.sha), undefined, filters.firstParent)) {
    if (kept.length >= end) {
      exhausted = false;
      break;
    }
    if (keeps(node, filters)) kept.push(node.sha);
  }
  const commits = await findCommits(db, projectId, kept.slice(page.offset));
  if (exhausted) return { commits, total: kept.length };
  const tips = [...new Set(heads.map((one) => one.sha))];
  if (tips.length === 1 && filters.after === undefined && filters.before === undefined && !filters.skipMerges) {
    const tip = graph.get(tips[0]!)!;
    return { commits, total: filters.firstParent ? tip.firstParentDepth : tip.ancestors };
  }
  return { commits, total: await countLog(db, projectId, tips, filters) };
}

/**
 * How many commits the heads reach within the log's date filters (`git rev-list --count --since --until`), in one statement.
 * With `firstParent`, only first parents are followed: the rows read are the heads' first-parent chains.
 */
async function countLog(db: Db, projectId: number, tips: readonly string[], filters: LogFilters): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    with recursive walk(sha, parents, time) as (
      select c.sha, c.parents, c.committer_time from repository_commits c where c.project_id = ${projectId} and c.sha = any(${tips}::text[])
      union
      select c.sha, c.parents, c.committer_time from walk w
        cross join lateral unnest(case when ${filters.firstParent ?? false}::boolean then w.parents[1:1] else w.parents end) as p(sha)
        cross join lateral (select * from repository_commits c where c.project_id = ${projectId} and c.sha = p.sha limit 1) c)
    select count(*) as n from walk
     where (time >= ${filters.after ?? null}::bigint) is not false and (time <= ${filters.before ?? null}::bigint) is not false
       and (${filters.skipMerges ?? false}::boolean is false or cardinality(parents) < 2)`.execute(db);
  return Number(rows[0]!.n);
}

// ───────────────────────────── Paths' histories (the per-path change index) ─────────────────────────────

interface Change {
  sha: string;
  generation: number;
  committer_time: string | number;
  parents: string[];
  /** The entry the commit left at the path (null: removed). */
  entry: string | null;
}

/** The commits the log of `path` shows wherever they are walked to (those that left it as `entry`, when given), newest first. */
async function shownChanges(db: Db, projectId: number, path: string, entry?: string | null): Promise<Change[]> {
  const { rows } = await sql<Change>`
    select c.sha, c.generation, c.committer_time, c.parents, p.entry
      from repository_path_changes p
      join repository_commits c on c.project_id = p.project_id and c.sha = p.commit_sha
     where p.project_id = ${projectId} and p.path_key = ${pathKey(path)} and p.follow is null
       and (${entry === undefined}::boolean or (p.entry = ${entry ?? null}::text) or (${entry === null}::boolean and p.entry is null))
     order by c.committer_time desc, c.generation desc, c.sha`.execute(db);
  return rows;
}

/**
 * Which of `changes` git's log of `path` from `heads` walks to: the history as `git log --
 * path` simplifies it (a merge the path is the same in as in a parent is followed to the first
 * such parent only; path-changes.ts, PathChange), walked in one statement down to the oldest
 * of `changes`.
 */
async function walkedTo(db: Db, projectId: number, heads: readonly string[], path: string, changes: readonly Change[]): Promise<Set<string>> {
  if (changes.length === 0 || heads.length === 0) return new Set();
  const floor = Math.min(...changes.map((change) => change.generation));
  const { rows } = await sql<{ sha: string }>`
    with recursive walk(sha, parents) as (
      select c.sha, c.parents from repository_commits c where c.project_id = ${projectId} and c.sha = any(${[...new Set(heads)]}::text[]) and c.generation >= ${floor}
      union
      select c.sha, c.parents from walk w
        left join lateral (select true as changed, p.follow from repository_path_changes p where p.project_id = ${projectId} and p.path_key = ${pathKey(path)} and p.commit_sha = w.sha limit 1) r on true
        cross join lateral unnest(case when r.changed is null then w.parents[1:1] when r.follow is null then w.parents else w.parents[r.follow:r.follow] end) as p(sha)
        cross join lateral (select * from repository_commits c where c.project_id = ${projectId} and c.sha = p.sha limit 1) c
       where c.generation >= ${floor})
    select sha from walk where sha = any(${changes.map((change) => change.sha)}::text[])`.execute(db);
  return new Set(rows.map((row) => row.sha));
}

/**
 * The newest commit from `head` that changed `path` (GitLab's last_commit_for_path, `git log
 * -1 head -- path`), given the path's entry at `head` (`entryAt`; null when it has none): of
 * the commits that left the path as that entry — one, unless the same content came back or
 * came twice, and then the newest the simplified history walks to.
 */
export async function lastCommitFor(db: Db, projectId: number, head: string, path: string, entry: string | null): Promise<string | undefined> {
  const key = indexedPath(path);
  if (key === '') return head;
  const changes = await shownChanges(db, projectId, key, entry);
  if (changes.length <= 1) return changes[0]?.sha;
  const walked = await walkedTo(db, projectId, [head], key, changes);
  return changes.find((change) => walked.has(change.sha))?.sha;
}

/**
 * The commits `git log heads -- path` shows, newest committer date first, within the log's
 * date and merge filters, each with the entry it left at the path: the path's changes that
 * its simplified history walks to.
 */
export async function pathVersions(db: Db, projectId: number, heads: readonly string[], path: string, filters: LogFilters): Promise<{ sha: string; entry: string | null }[]> {
  const key = indexedPath(path);
  const changes = (await shownChanges(db, projectId, key)).filter((change) => keeps({ parents: change.parents, time: Number(change.committer_time) }, filters));
  const walked = await walkedTo(db, projectId, heads, key, changes);
  return changes.filter((change) => walked.has(change.sha)).map(({ sha, entry }) => ({ sha, entry }));
}

/**
 * `git log --first-parent heads -- path`: the commits of the heads' first-parent chains whose
 * path differs from their first parent's (git compares a merge with its first parent only
 * under --first-parent, so a merge that took the path from another side is shown too), within
 * the log's date and merge filters, newest committer date first. Every row of the per-path
 * change index is such a difference (the rows are taken against the first parent), so the
 * candidates are the path's rows, and the heads' first-parent chains are walked in one
 * statement down to the oldest of them (as walkedTo, on parents[1] alone).
 */
export async function firstParentPathLog(db: Db, projectId: number, heads: readonly string[], path: string, filters: LogFilters): Promise<string[]> {
  const key = indexedPath(path);
  const { rows } = await sql<Change>`
    select c.sha, c.generation, c.committer_time, c.parents, p.entry
      from repository_path_changes p
      join repository_commits c on c.project_id = p.project_id and c.sha = p.commit_sha
     where p.project_id = ${projectId} and p.path_key = ${pathKey(key)}
     order by c.committer_time desc, c.generation desc, c.sha`.execute(db);
  const changes = rows.filter((change) => keeps({ parents: change.parents, time: Number(change.committer_time) }, filters));
  if (changes.length === 0 || heads.length === 0) return [];
  const floor = Math.min(...changes.map((change) => change.generation));
  const { rows: walked } = await sql<{ sha: string }>`
    with recursive walk(sha, parents) as (
      select c.sha, c.parents from repository_commits c where c.project_id = ${projectId} and c.sha = any(${[...new Set(heads)]}::text[]) and c.generation >= ${floor}
      union
      select c.sha, c.parents from walk w
        cross join lateral (select * from repository_commits c where c.project_id = ${projectId} and c.sha = w.parents[1] limit 1) c
       where c.generation >= ${floor})
    select sha from walk where sha = any(${changes.map((change) => change.sha)}::text[])`.execute(db);
  const on = new Set(walked.map((row) => row.sha));
  return changes.filter((change) => on.has(change.sha)).map((change) => change.sha);
}

/** The SHAs of pathVersions: the list's `path` filter. */
export async function pathLog(db: Db, projectId: number, heads: readonly string[], path: string, filters: LogFilters): Promise<string[]> {
  return (await pathVersions(db, projectId, heads, path, filters)).map((version) => version.sha);
}

/** The project's protected branches with their rules (for push access and the branch entity). */
export async function protectedRefsOf(db: Db, projectId: number): Promise<ProtectedRef[]> {
  return protectedRefsFrom(await db.executeQuery(protectedRefsQuery(db, projectId)).then((result) => result.rows));
}

/** protectedRefsOf's one query, to send with other reads (readTogether); `protectedRefsFrom` makes its rows the rules. */
export const protectedRefsQuery = (db: Db, projectId: number) =>
  db
    .selectFrom('protected_branches as b')
    .leftJoin('protected_branch_access_levels as r', 'r.protected_branch_id', 'b.id')
    .select(['b.id', 'b.name', 'r.kind', 'r.access_level', 'r.user_id', 'r.group_id'])
    .where('b.project_id', '=', projectId)
    .orderBy('b.id')
    .orderBy('r.position')
    .compile();

export function protectedRefsFrom(rows: readonly ProtectedRefRow[]): ProtectedRef[] {
  const refs = new Map<number, { name: string; rules: ProtectedRefRule[] }>();
  for (const row of rows) {
    let ref = refs.get(row.id);
    if (!ref) refs.set(row.id, (ref = { name: row.name, rules: [] }));
    if (row.kind !== null) ref.rules.push({ kind: row.kind, access_level: row.access_level!, user_id: row.user_id, group_id: row.group_id });
  }
  return [...refs.values()];
}
type ProtectedRefRow = ReturnType<typeof protectedRefsQuery> extends CompiledQuery<infer R> ? R : never;

/**
 * The project's protection rules and a user as they judge them (Gitlab::UserAccess): the
 * user's groups among those the rules name. For the ref writes' branch check and for
 * `can_merge`.
 */
export async function pushAccess(db: Db, projectId: number, user: Omit<Pusher, 'groupIds'>, known?: readonly ProtectedRef[]): Promise<{ refs: ProtectedRef[]; who: Pusher }> {
  const refs = known ? [...known] : await protectedRefsOf(db, projectId);
  const groupIds = await memberGroupIds(db, user.userId, ruleGroupIds(refs));
  return { refs, who: { userId: user.userId, isAdmin: user.isAdmin, role: user.role, canPushCode: user.canPushCode, groupIds, ...(user.collaboration ? { collaboration: user.collaboration } : {}) } };
}

/** Of some groups, those the user is a direct member of (EE's `group.users`). */
export async function memberGroupIds(db: Db, userId: number, groupIds: readonly number[]): Promise<Set<number>> {
  if (groupIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('members')
    .select('source_id')
    .where('source_type', '=', 'Namespace')
    .where('user_id', '=', userId)
    .where('source_id', 'in', [...groupIds])
    .execute();
  return new Set(rows.map((r) => r.source_id));
}

/**
 * Lines added and removed against the first parent (git's numstat, CommitStats), as they
 * were counted when the commit was stored (`repository_commit_stats`: path-changes.ts); a
 * commit without its row (none should be) is counted now, by the same rule.
 */
export async function commitStats(db: Db, projectId: number, commit: CommitView): Promise<{ additions: number; deletions: number }> {
  return (await commitsStats(db, projectId, [commit.sha])).get(commit.sha)!;
}

/** commitStats of a page of commits, in one query. */
export async function commitsStats(db: Db, projectId: number, shas: readonly string[]): Promise<Map<string, { additions: number; deletions: number }>> {
  const stats = new Map<string, { additions: number; deletions: number }>();
  if (shas.length === 0) return stats;
  const rows = await db.selectFrom('repository_commit_stats').select(['commit_sha', 'additions', 'deletions']).where('project_id', '=', projectId).where('commit_sha', 'in', shas).execute();
  for (const row of rows) stats.set(row.commit_sha, { additions: row.additions, deletions: row.deletions });
  const missing = shas.filter((sha) => !stats.has(sha));
  if (missing.length > 0) for (const counted of (await expectedCommitIndex(db, projectId, missing)).stats) stats.set(counted.commit, { additions: counted.additions, deletions: counted.deletions });
  for (const sha of shas) if (!stats.has(sha)) stats.set(sha, { additions: 0, deletions: 0 });
  return stats;
}

/** Blobs' contents by SHA, in one query per 1,000 (a statement takes at most 65,535 parameters). */
export function readBlobs(db: Db, projectId: number, shas: readonly string[]): Promise<Map<string, Uint8Array>> {
  return new ObjectReader(db, projectId).blobs(shas);
}

/**
 * The changed paths between two commits' trees (`git diff <from> <to>`, renames paired); a
 * null `from` is the empty tree (a root commit's diff). Unknown commits read as empty trees.
 */
async function commitChanges(db: Db, projectId: number, fromSha: string | null, toSha: string, objects: ObjectReader): Promise<FileChange[]> {
  const commits = await objects.commits(fromSha === null ? [toSha] : [fromSha, toSha]);
  const [from, to] = [commits.find((c) => c.sha === fromSha), commits.find((c) => c.sha === toSha)];
  if (!to) return [];
  const { before, after } = await changedFiles(db, projectId, from?.tree ?? null, to.tree, objects);
  return treeChanges(before, after);
}

/** The diff entries of some changes, their blobs read in one query. */
const entriesOf = async (objects: ObjectReader, changes: readonly FileChange[]): Promise<DiffEntry[]> => diffEntries(changes, await objects.blobs(neededBlobs(changes)));

/** Every diff entry between two commits (`compare.diffs(limits: false)`), as commitChanges takes them. */
export async function diffCommits(db: Db, projectId: number, fromSha: string | null, toSha: string): Promise<DiffEntry[]> {
  const objects = new ObjectReader(db, projectId);
  return entriesOf(objects, await commitChanges(db, projectId, fromSha, toSha, objects));
}

/**
 * The diff between two commits as a DiffCollection collects it under `limits` (limitDiffs):
 * the entries up to the limit, whether it overflowed, and how many files changed in all
 * (`real_size`). The collection stops at the limit's file, so the blobs past it are never read.
 */
export async function collectDiffs(
  db: Db,
  projectId: number,
  fromSha: string | null,
  toSha: string,
  limits: DiffLimits = DIFF_LIMITS,
  objects = new ObjectReader(db, projectId),
): Promise<{ diffs: DiffEntry[]; overflow: boolean; changedFiles: number }> {
  const changes = await commitChanges(db, projectId, fromSha, toSha, objects);
  const { diffs, overflow } = limitDiffs(await entriesOf(objects, changes.slice(0, limits.maxFiles)), limits);
  return { diffs, overflow: overflow || changes.length > limits.maxFiles, changedFiles: changes.length };
}
