import type { Db } from '../../database/database.js';
import { sha256 } from '../../eventstore/hash.js';
import { type CommitStats, lineStats, statBlobs } from '../../domain/repository/commit-stats.js';
import { MODES, parseCommit, parseTree, type TreeEntry } from '../../domain/repository/objects.js';

/**
 * The per-path change index (`repository_path_changes`, migration 0071): for every stored
 * commit, the paths it changes against its first parent — files and the directories above
 * them, each with the SHA of its entry after the commit (null where the commit removed it) —
 * and, for a merge, which parent git's history simplification follows for the path (git's
 * TREESAME rule: see PathChange). A root commit changes every path of its tree. Written with
 * the commit by indexCommits (commit-graph.ts), append-only, not a projection.
 *
 * It answers the reads that git answers by walking the history with a pathspec (queries.ts:
 * `lastCommitFor`, `pathLog`): the last commit of a path (the files API's `last_commit_id`)
 * from the commits that gave the path the entry it has at the head, and a log filtered by path
 * from the commits that changed it. A read's cost follows the path's history, not the
 * repository's.
 *
 * The same diff against the first parent gives each commit's `stats` (lines added and
 * removed: ../../domain/repository/commit-stats.ts), kept in `repository_commit_stats`
 * (migration 0072) as the commit is indexed, so a commit's stats are a row to read.
 */

interface StoredObject {
  readonly type: string;
  readonly content: Uint8Array;
}

/**
 * Trees and commits as the indexer reads them: from the objects being stored in this
 * transaction first, then from `repository_objects`, each read once.
 */
class ObjectSource {
  /** Parsed objects by SHA; null: asked for and not stored as that type. */
  private readonly trees = new Map<string, TreeEntry[] | null>();
  private readonly commits = new Map<string, { tree: string; parents: readonly string[] } | null>();
  /** How many times a tree asked for was not stored (verify skips what it cannot recompute). */
  misses = 0;

  constructor(
    private readonly db: Db,
    private readonly projectId: number,
    private readonly batch: ReadonlyMap<string, StoredObject>,
  ) {}

  /** The trees among `shas` (a SHA that is no stored tree is left out). */
  async readTrees(shas: readonly string[]): Promise<Map<string, TreeEntry[]>> {
    await this.read('tree', shas, this.trees, parseTree);
    const found = new Map(shas.flatMap((sha) => (this.trees.get(sha) ? [[sha, this.trees.get(sha)!] as const] : [])));
    this.misses += new Set(shas).size - found.size;
    return found;
  }

  /** The trees and parents of commits (null for a SHA that is no stored commit). */
  async readCommits(shas: readonly string[]): Promise<Map<string, { tree: string; parents: readonly string[] } | null>> {
    await this.read('commit', shas, this.commits, parseCommit);
    return new Map(shas.map((sha) => [sha, this.commits.get(sha) ?? null]));
  }

  /**
   * The contents of the objects among `shas` (any type: a stat reads what the SHA names, as
   * findObject does), not kept: a page's blobs are read once. A SHA not stored is left out.
   */
  async readContents(shas: readonly string[]): Promise<Map<string, Uint8Array>> {
    const found = new Map<string, Uint8Array>();
    const missing: string[] = [];
    for (const sha of new Set(shas)) {
      const object = this.batch.get(sha);
      if (object) found.set(sha, object.content);
      else missing.push(sha);
    }
    for (let i = 0; i < missing.length; i += 1000) {
      const rows = await this.db.selectFrom('repository_objects').select(['sha', 'content']).where('project_id', '=', this.projectId).where('sha', 'in', missing.slice(i, i + 1000)).execute();
      for (const row of rows) found.set(row.sha, new Uint8Array(row.content));
    }
    return found;
  }

  /** Fills `cache` for `shas`: from the batch, else in one statement; null for what is not stored as `type`. */
  private async read<T>(type: 'tree' | 'commit', shas: readonly string[], cache: Map<string, T | null>, parse: (content: Uint8Array) => T): Promise<void> {
    const missing: string[] = [];
    for (const sha of new Set(shas)) {
      if (cache.has(sha)) continue;
      const object = this.batch.get(sha);
      if (object?.type === type) cache.set(sha, parse(object.content));
      else missing.push(sha);
    }
    if (missing.length === 0) return;
    const rows = await this.db.selectFrom('repository_objects').select(['sha', 'content']).where('project_id', '=', this.projectId).where('type', '=', type).where('sha', 'in', missing).execute();
    for (const row of rows) cache.set(row.sha, parse(new Uint8Array(row.content)));
    for (const sha of missing) if (!cache.has(sha)) cache.set(sha, null);
  }
}

/** The files (no directories) that differ between two trees: path → blob SHA on each side that has the path as a file; `links`: the submodules' commits among them (never stored here). */
interface FileDiff {
  readonly before: Map<string, string>;
  readonly after: Map<string, string>;
  readonly links: Set<string>;
}

const GITLINK = '160000';

/**
 * The paths whose entries differ between two trees (null: the empty tree), with the entry's
 * SHA in `to` (null where `to` has none): a level of both trees at a time, a subtree of the
 * same SHA on both sides never read. A directory is listed when anything below it differs.
 * `files`, when given, gets the differing files of each side.
 */
async function differingPaths(source: ObjectSource, from: string | null, to: string | null, files?: FileDiff): Promise<Map<string, string | null>> {
  const changed = new Map<string, string | null>();
  let level: { prefix: string; from: string | null; to: string | null }[] = from === to ? [] : [{ prefix: '', from, to }];
  while (level.length > 0) {
    const trees = await source.readTrees(level.flatMap((pair) => [pair.from, pair.to].filter((sha): sha is string => sha !== null)));
    const next: typeof level = [];
    for (const pair of level) {
      const old = new Map((pair.from === null ? [] : (trees.get(pair.from) ?? [])).map((e) => [e.name, e]));
      const now = new Map((pair.to === null ? [] : (trees.get(pair.to) ?? [])).map((e) => [e.name, e]));
      for (const name of new Set([...old.keys(), ...now.keys()])) {
        const [o, n] = [old.get(name), now.get(name)];
        if (o && n && o.sha === n.sha && o.mode === n.mode) continue;
        const path = `${pair.prefix}${name}`;
        changed.set(path, n?.sha ?? null);
        const [oTree, nTree] = [o?.mode === MODES.tree, n?.mode === MODES.tree];
        if (oTree || nTree) next.push({ prefix: `${path}/`, from: oTree ? o!.sha : null, to: nTree ? n!.sha : null });
        if (files) {
          if (o && !oTree) files.before.set(path, o.sha);
          if (n && !nTree) files.after.set(path, n.sha);
          for (const entry of [o, n]) if (entry && (entry.mode as string) === GITLINK) files.links.add(entry.sha);
        }
      }
    }
    level = next;
  }
  return changed;
}

/**
 * A row of the index: `commit` changed `path` against its first parent, leaving it as `entry`
 * (null: removed). `follow` is git's history simplification (`git log -- path`): null when the
 * path differs from every parent too (the commit is one the log shows, and its walk goes on
 * to every parent), else the 1-based index of the first parent the path is the same as (a
 * merge that took the path from that side: the walk goes on to that parent only, and the
 * commit is not shown). A commit without a row for a path is the same as its first parent
 * there: not shown, and walked on to its first parent only.
 */
export interface PathChange {
  readonly commit: string;
  readonly path: string;
  readonly entry: string | null;
  readonly follow: number | null;
}

/** A commit's stats row: lines added and removed against its first parent. */
export interface StatsRow extends CommitStats {
  readonly commit: string;
}

/**
 * The index rows of `commits`: each diffed against its first parent (a root against the empty
 * tree), a merge's paths also against its other parents; and each one's stats, from the same
 * diff, the page's blobs read together.
 */
async function commitIndexRows(source: ObjectSource, commits: readonly string[], unsound = new Set<string>()): Promise<{ changes: PathChange[]; stats: StatsRow[]; lacking: Set<string> }> {
  const changes: PathChange[] = [];
  const diffs = new Map<string, FileDiff>();
  const headers = await source.readCommits(commits);
  const parents = await source.readCommits([...new Set([...headers.values()].flatMap((header) => header?.parents ?? []))]);
  const treeOf = (parent: string) => parents.get(parent)?.tree ?? null;
  for (const sha of commits) {
    const header = headers.get(sha);
    if (!header) continue;
    const [first, ...others] = header.parents;
    const misses = source.misses;
    const files: FileDiff = { before: new Map(), after: new Map(), links: new Set() };
    diffs.set(sha, files);
    const changed = await differingPaths(source, first === undefined ? null : treeOf(first), header.tree, files);
    if (changed.size === 0) continue;
    const follow = new Map<string, number>();
    for (const [i, other] of others.entries()) {
      const against = await differingPaths(source, treeOf(other), header.tree);
      for (const path of changed.keys()) if (!follow.has(path) && !against.has(path)) follow.set(path, i + 2);
    }
    if (source.misses > misses) unsound.add(sha);
    for (const [path, entry] of changed) changes.push({ commit: sha, path, entry, follow: follow.get(path) ?? null });
  }
  const wanted = [...new Set([...diffs.values()].flatMap((files) => statBlobs(files.before, files.after)))];
  const blobs = await source.readContents(wanted);
  // A blob that is not stored reads as empty (a submodule's commit always): `lacking`, the commits with another one missing.
  const lacking = new Set([...diffs].filter(([, files]) => statBlobs(files.before, files.after).some((blob) => !blobs.has(blob) && !files.links.has(blob))).map(([sha]) => sha));
  const stats = [...diffs].map(([commit, files]) => ({ commit, ...lineStats(files.before, files.after, blobs) }));
  return { changes, stats, lacking };
}

/**
 * The index rows and stats `commits` should have, from their objects in the database
 * (verify's recomputation), and the commits whose trees are not all stored (`unsound`: their
 * rows cannot be recomputed; the missing objects are verify's object_missing). `stats` leaves
 * out the unsound commits and those whose changed blobs are not all stored.
 */
export async function expectedCommitIndex(db: Db, projectId: number, commits: readonly string[]): Promise<{ changes: PathChange[]; stats: StatsRow[]; unsound: Set<string> }> {
  const unsound = new Set<string>();
  const { changes, stats, lacking } = await commitIndexRows(new ObjectSource(db, projectId, new Map()), commits, unsound);
  return { changes, stats: stats.filter((row) => !unsound.has(row.commit) && !lacking.has(row.commit)), unsound };
}

/** Writes the index rows and stats of `commits` (new to the commit graph), reading trees and blobs from `batch` first. */
export async function indexPathChanges(db: Db, projectId: number, commits: readonly string[], batch: ReadonlyMap<string, StoredObject> = new Map()): Promise<void> {
  const source = new ObjectSource(db, projectId, batch);
  for (let i = 0; i < commits.length; i += 200) {
    const { changes, stats } = await commitIndexRows(source, commits.slice(i, i + 200));
    for (let j = 0; j < changes.length; j += 1000) {
      await db
        .insertInto('repository_path_changes')
        .values(changes.slice(j, j + 1000).map((row) => ({ project_id: projectId, path: row.path, path_key: pathKey(row.path), commit_sha: row.commit, entry: row.entry, follow: row.follow })))
        .onConflict((oc) => oc.columns(['project_id', 'path_key', 'commit_sha']).doNothing())
        .execute();
    }
    if (stats.length === 0) continue;
    await db
      .insertInto('repository_commit_stats')
      .values(stats.map((row) => ({ project_id: projectId, commit_sha: row.commit, additions: row.additions, deletions: row.deletions })))
      .onConflict((oc) => oc.columns(['project_id', 'commit_sha']).doNothing())
      .execute();
  }
}

/** A path as the index keeps it: no leading, trailing or doubled slashes ('' is the root). Looked up by `pathKey`. */
export const pathKey = (path: string): Buffer => sha256(Buffer.from(path, 'utf8'));

export const indexedPath = (path: string) =>
  path
    .split('/')
    .filter((part) => part !== '')
    .join('/');
