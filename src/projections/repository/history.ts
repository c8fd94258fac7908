import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { parseCommit } from '../../domain/repository/objects.js';

/**
 * The commit graph of a project's repository, read from `repository_objects`: merge bases,
 * `git rev-list to ^from` and ancestry, as git computes them. The graph is read a whole
 * closure at a time, in one statement (`load`). Unknown SHAs (not a commit of this project)
 * are simply absent from the graph: a walk stops there. Still a walk of the history per
 * call: a commit graph kept as it is written (generation numbers) is the repository issue's.
 *
 * Used by merge requests (src/projections/repository/merges.ts: mergeability;
 * src/commands/repository-merge.ts: merge commits, diverged commits) and by anything that
 * needs "is this branch merged".
 */

interface Node {
  readonly parents: readonly string[];
  /** Committer time, seconds since the epoch (git's commit date, the walk's priority). */
  readonly time: number;
}

type Graph = Map<string, Node>;

/**
 * Loads every commit reachable from `tips` that is not in the graph yet, in one statement: a
 * recursive walk in PostgreSQL that takes each commit's parents from its header lines, and
 * stops at commits the graph has (their ancestors are in it too: it only ever gets whole
 * closures). One round trip for a history of any length, where a walk one query per
 * generation made a linear history of 500 commits 500 round trips.
 */
async function load(db: Db, projectId: number, graph: Graph, tips: readonly string[]): Promise<void> {
  const known = [...graph.keys()];
  const wanted = [...new Set(tips)].filter((sha) => !graph.has(sha));
  if (wanted.length === 0) return;
  const header = sql`substring(o.content from 1 for coalesce(nullif(position(decode('0a0a', 'hex') in o.content), 0), length(o.content)))`;
  const { rows } = await sql<{ sha: string; content: Uint8Array }>`
    with recursive walk(sha) as (
      select unnest(${wanted}::text[])
      union
      select parent.line[1] from walk w
        join repository_objects o on o.project_id = ${projectId} and o.sha = w.sha and o.type = 'commit'
        cross join lateral regexp_matches(encode(${header}, 'escape'), '^parent ([0-9a-f]{40})$', 'gn') parent(line)
       where parent.line[1] <> all(${known}::text[]))
    select o.sha, o.content from walk
      join repository_objects o on o.project_id = ${projectId} and o.sha = walk.sha and o.type = 'commit'`.execute(db);
  for (const row of rows) {
    const parsed = parseCommit(new Uint8Array(row.content));
    graph.set(row.sha, { parents: parsed.parents, time: parsed.committer.time });
  }
}

/**
 * Every commit reachable from `tips` (themselves included), loaded into the graph; the walk
 * stops early when `until` says so for a commit, and does not enter `skip`.
 */
async function reachable(db: Db, projectId: number, graph: Graph, tips: readonly string[], until?: (sha: string) => boolean, skip?: ReadonlySet<string>): Promise<Set<string>> {
  await load(db, projectId, graph, tips);
  const seen = new Set<string>();
  let wave = [...new Set(tips)];
  while (wave.length > 0) {
    const next: string[] = [];
    for (const sha of wave) {
      const node = graph.get(sha);
      if (!node || seen.has(sha) || skip?.has(sha)) continue;
      seen.add(sha);
      if (until?.(sha)) return seen;
      for (const parent of node.parents) if (!seen.has(parent)) next.push(parent);
    }
    wave = [...new Set(next)];
  }
  return seen;
}

/**
 * git's date-order walk (rev-list without --topo-order): a queue by committer date, newest
 * first, ties first in first out; each commit once, its parents queued when it is shown.
 */
function dateOrder(graph: Graph, tip: string, keep: (sha: string) => boolean, walk: (sha: string) => boolean = () => true): string[] {
  const out: string[] = [];
  if (!graph.has(tip)) return out;
  const seen = new Set([tip]);
  const queue = [tip];
  while (queue.length > 0) {
    const sha = queue.shift()!;
    if (keep(sha)) out.push(sha);
    for (const parent of graph.get(sha)!.parents) {
      if (seen.has(parent) || !graph.has(parent) || !walk(parent)) continue;
      seen.add(parent);
      // Insert after every queued commit at least as new (commit_list_insert_by_date).
      const time = graph.get(parent)!.time;
      let at = queue.length;
      while (at > 0 && graph.get(queue[at - 1]!)!.time < time) at--;
      queue.splice(at, 0, parent);
    }
  }
  return out;
}

/**
 * All the best common ancestors of `a` and `b` (`git merge-base --all`): the common
 * ancestors that are not an ancestor of another one, newest committer date first. With
 * several `b`s, git's `merge-base a b c`: those of `a` and a hypothetical merge of them.
 */
export async function mergeBases(db: Db, projectId: number, a: string, b: string | readonly string[]): Promise<string[]> {
  const others = typeof b === 'string' ? [b] : b;
  const graph: Graph = new Map();
  const ofA = await reachable(db, projectId, graph, [a]);
  if (ofA.size === 0) return [];
  if (others.length === 1 && ofA.has(others[0]!)) return [others[0]!];
  const ofB = await reachable(db, projectId, graph, others);
  if (ofB.has(a)) return [a];
  const common = [...ofA].filter((sha) => ofB.has(sha));
  // An ancestor of a common commit is common too: mark every proper ancestor of one as redundant.
  const redundant = new Set<string>();
  const stack = common.flatMap((sha) => graph.get(sha)!.parents);
  while (stack.length > 0) {
    const sha = stack.pop()!;
    if (redundant.has(sha) || !graph.has(sha)) continue;
    redundant.add(sha);
    stack.push(...graph.get(sha)!.parents);
  }
  const best = new Set(common.filter((sha) => !redundant.has(sha)));
  // In the order a date walk from `a` meets them (git's paint_down_to_common keeps date order).
  return dateOrder(graph, a, (sha) => best.has(sha));
}

/**
 * `git merge-base a b` (or `a b c…`): the best common ancestor (the first of `mergeBases`),
 * or null when they share no history or one is not a commit of the project.
 */
export async function mergeBase(db: Db, projectId: number, a: string, b: string | readonly string[]): Promise<string | null> {
  return (await mergeBases(db, projectId, a, b))[0] ?? null;
}

/**
 * `git rev-list to ^from` (`from` null: `git rev-list to`): the commits reachable from `to`
 * and not from `from`, newest first in git log's default (date) order.
 */
export async function commitsBetween(db: Db, projectId: number, from: string | null, to: string): Promise<string[]> {
  const graph: Graph = new Map();
  const excluded = from === null ? new Set<string>() : await reachable(db, projectId, graph, [from]);
  if (excluded.has(to)) return [];
  await reachable(db, projectId, graph, [to], undefined, excluded);
  const wanted = (sha: string) => !excluded.has(sha);
  return dateOrder(graph, to, wanted, wanted);
}

/** `git merge-base --is-ancestor a b`: is `a` reachable from `b` (a commit is its own ancestor)? */
export async function isAncestor(db: Db, projectId: number, a: string, b: string): Promise<boolean> {
  const graph: Graph = new Map();
  const seen = await reachable(db, projectId, graph, [b], (sha) => sha === a);
  return seen.has(a);
}

/**
 * Is `sha` reachable from one of `tips` (`git branch --contains` has an answer among them)?
 * One walk from all the tips together, stopping as soon as it meets `sha`.
 */
export async function reachableFromAny(db: Db, projectId: number, sha: string, tips: readonly string[]): Promise<boolean> {
  if (tips.length === 0) return false;
  const graph: Graph = new Map();
  const seen = await reachable(db, projectId, graph, tips, (found) => found === sha);
  return seen.has(sha);
}

/**
 * The tips among `tips` that contain `sha` (`git branch --contains`): their histories loaded
 * in one statement, then each commit judged once — it contains `sha` when it is `sha` or a
 * parent does — in an iterative walk, so a long history does not exhaust the stack.
 */
export async function tipsContaining<T extends { readonly sha: string }>(db: Db, projectId: number, sha: string, tips: readonly T[]): Promise<T[]> {
  const graph: Graph = new Map();
  await load(db, projectId, graph, tips.map((tip) => tip.sha));
  if (!graph.has(sha)) return [];
  const contains = new Map<string, boolean>([[sha, true]]);
  for (const tip of tips) {
    const stack = [tip.sha];
    while (stack.length > 0) {
      const current = stack[stack.length - 1]!;
      if (contains.has(current)) {
        stack.pop();
        continue;
      }
      const parents = graph.get(current)?.parents ?? [];
      const pending = parents.filter((parent) => !contains.has(parent));
      if (pending.length > 0) {
        stack.push(...pending);
        continue;
      }
      contains.set(current, parents.some((parent) => contains.get(parent)));
      stack.pop();
    }
  }
  return tips.filter((tip) => contains.get(tip.sha));
}
