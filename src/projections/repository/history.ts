import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { LruMap } from '../../lru.js';
import { CommitGraph, dateOrder, paintDownToCommon, reachableOnlyFrom, removeRedundant } from './commit-graph.js';

/**
 * The commit graph of a project's repository: merge bases, `git rev-list to ^from` and
 * ancestry, as git computes them, read from the commit graph index (`repository_commits`,
 * src/projections/repository/commit-graph.ts) with git's generation cut-offs: a commit
 * reaches none of a greater or equal generation but itself, so a walk stops at the lowest
 * generation that can still matter, and costs the commits between, not the history. Unknown
 * SHAs (not a commit of this project) are absent from the graph: a walk stops there.
 *
 * Used by merge requests (src/projections/repository/merges.ts: mergeability;
 * src/commands/repository-merge.ts: merge commits, diverged commits), compare, the branch
 * check and the branch list's `merged`.
 */

/**
 * All the best common ancestors of `a` and `b` (`git merge-base --all`): the common
 * ancestors that are not an ancestor of another one, newest committer date first, as git
 * sorts them (the same second: as a date walk from `a` meets them). With several `b`s, git's
 * `merge-base a b c`: those of
 * `a` and a hypothetical merge of them. git's paint_down_to_common by generation, then
 * remove_redundant: the commits down to the merge bases are read, not the history.
 */
export async function mergeBases(db: Db, projectId: number, a: string, b: string | readonly string[], graph = new CommitGraph(db, projectId, 128)): Promise<string[]> {
  const others = typeof b === 'string' ? [b] : b;
  await graph.load([a, ...others]);
  const twos = others.filter((sha) => graph.get(sha));
  if (!graph.get(a) || twos.length === 0) return [];
  const best = await removeRedundant(graph, await paintDownToCommon(graph, a, twos));
  if (best.length < 2) return best;
  // get_merge_bases_many_0 sorts them by date (commit_list_insert_by_date); commits of the same
  // second are taken in the order a date walk from `a` meets them.
  const time = (sha: string) => graph.get(sha)!.time;
  const times = best.map(time);
  if (new Set(times).size === times.length) return best.sort((x, y) => time(y) - time(x));
  const met = new Map<string, number>();
  for await (const node of dateOrder(graph, [a])) {
    if (best.includes(node.sha)) met.set(node.sha, met.size);
    if (met.size === best.length) break;
  }
  return best.sort((x, y) => time(y) - time(x) || met.get(x)! - met.get(y)!);
}

/**
 * `git merge-base a b` (or `a b c…`): the best common ancestor (the first of `mergeBases`),
 * or null when they share no history or one is not a commit of the project. Walks that
 * follow on the same commits share `graph`: what one loaded, the next does not read again.
 */
export async function mergeBase(db: Db, projectId: number, a: string, b: string | readonly string[], graph = new CommitGraph(db, projectId, 128)): Promise<string | null> {
  return (await mergeBases(db, projectId, a, b, graph))[0] ?? null;
}

/**
 * `git rev-list to ^from` (`from` null: `git rev-list to`): the commits reachable from `to`
 * and not from `from`, newest first in git log's default (date) order. The set is walked by
 * generation from both ends down to where they meet; then ordered by date among themselves.
 */
export async function commitsBetween(db: Db, projectId: number, from: string | null, to: string, graph = new CommitGraph(db, projectId, 128)): Promise<string[]> {
  const wanted = await reachableOnlyFrom(graph, [to], from === null ? [] : [from]);
  if (!wanted.has(to)) return [];
  const out: string[] = [];
  for await (const node of dateOrder(graph, [to], (sha) => wanted.has(sha))) out.push(node.sha);
  return out;
}

/**
 * The ancestors of `tips` whose generation is at least `sha`'s (the only ones that can be or
 * reach it), as a recursive walk in PostgreSQL: one statement. `sha` unknown: none.
 */
function aboveOf(projectId: number, sha: string, tips: readonly string[]) {
  const floor = sql`(select generation from repository_commits where project_id = ${projectId} and sha = ${sha})`;
  return sql`
    walk(sha, parents) as (
      select c.sha, c.parents from repository_commits c
       where c.project_id = ${projectId} and c.sha = any(${[...new Set(tips)]}::text[]) and c.generation >= ${floor}
      union
      select c.sha, c.parents from walk w
        cross join lateral unnest(w.parents) as p(sha)
        cross join lateral (select * from repository_commits c where c.project_id = ${projectId} and c.sha = p.sha limit 1) c
       where c.generation >= ${floor})`;
}

/**
 * Is `sha` reachable from one of `tips` (`git merge-base --is-ancestor`, `git branch
 * --contains` has an answer among them)? One statement: the walk goes no lower than `sha`'s
 * generation and stops as soon as it meets it.
 */
export async function reachableFromAny(db: Db, projectId: number, sha: string, tips: readonly string[]): Promise<boolean> {
  if (tips.length === 0) return false;
  const { rows } = await sql<{ found: number }>`with recursive ${aboveOf(projectId, sha, tips)} select 1 as found from walk where sha = ${sha} limit 1`.execute(db);
  return rows.length > 0;
}

/** `git merge-base --is-ancestor a b`: is `a` reachable from `b` (a commit is its own ancestor)? */
export async function isAncestor(db: Db, projectId: number, a: string, b: string): Promise<boolean> {
  return reachableFromAny(db, projectId, a, [b]);
}

/**
 * The commit of `tip`'s first-parent chain that brought `sha` into it (GitLab's
 * BranchPushMergeCommitAnalyzer): `sha` itself when the chain passes through it (a fast
 * forward), else the oldest commit of the chain that reaches it (the merge). Null when `tip`
 * does not reach `sha`. The chain is read no lower than `sha`'s generation and, for a push,
 * not past `before` (the ref's previous head, which does not reach `sha`: nor does anything
 * below it), in one statement — the push's first-parent commits, not the branch's history; the
 * commits of it that reach `sha` are its newest ones, so the oldest is found by bisection.
 */
export async function mergeCommitOf(db: Db, projectId: number, sha: string, tip: string, before: string | null = null): Promise<string | null> {
  const floor = sql`(select generation from repository_commits where project_id = ${projectId} and sha = ${sha})`;
  const { rows } = await sql<{ sha: string }>`
    with recursive chain(sha, parents, n) as (
      select c.sha, c.parents, 0 from repository_commits c where c.project_id = ${projectId} and c.sha = ${tip} and c.generation >= ${floor}
      union all
      select c.sha, c.parents, w.n + 1 from chain w
        cross join lateral (select * from repository_commits c where c.project_id = ${projectId} and c.sha = w.parents[1] limit 1) c
       where c.generation >= ${floor} and c.sha is distinct from ${before})
    select sha from chain order by n`.execute(db);
  const chain = rows.map((row) => row.sha);
  if (chain.includes(sha)) return sha;
  if (chain.length === 0 || !(await isAncestor(db, projectId, sha, chain[0]!))) return null;
  let reaching = 0;
  for (let last = chain.length - 1; reaching < last; ) {
    const mid = Math.ceil((reaching + last) / 2);
    if (await isAncestor(db, projectId, sha, chain[mid]!)) reaching = mid;
    else last = mid - 1;
  }
  return chain[reaching]!;
}

/**
 * reachableAmong's answers: whether a commit reaches another never changes (a commit's SHA
 * fixes its parents, and a tip stored in a project has every ancestor stored with it), so
 * they are kept, as GitLab keeps `merged_branch_names` per root ref. The branch list asks the
 * same tip (the default branch's head) about the same heads on every request until one moves.
 */
const reached = new LruMap<string, boolean>(100_000);

/**
 * Which of `shas` are reachable from `tip` (`git branch --merged tip`, the branch list's
 * `merged`): those not answered before (`reached`) in one walk from `tip` down to the lowest
 * generation among them, stopping once it has met them all.
 */
export async function reachableAmong(db: Db, projectId: number, tip: string, shas: readonly string[]): Promise<Set<string>> {
  const keyOf = (sha: string) => `${projectId} ${tip} ${sha}`;
  const unknown = [...new Set(shas)].filter((sha) => reached.get(keyOf(sha)) === undefined);
  const found = await walkReachable(db, projectId, tip, unknown);
  for (const sha of unknown) reached.set(keyOf(sha), found.has(sha));
  return new Set(shas.filter((sha) => reached.get(keyOf(sha)) ?? found.has(sha)));
}

async function walkReachable(db: Db, projectId: number, tip: string, wanted: readonly string[]): Promise<Set<string>> {
  if (wanted.length === 0) return new Set();
  const { rows } = await sql<{ sha: string }>`
    with recursive candidate as (
      select generation from repository_commits where project_id = ${projectId} and sha = any(${wanted}::text[])
    ), walk(sha, parents) as (
      select c.sha, c.parents from repository_commits c
       where c.project_id = ${projectId} and c.sha = ${tip} and c.generation >= (select min(generation) from candidate)
      union
      select c.sha, c.parents from walk w
        cross join lateral unnest(w.parents) as p(sha)
        cross join lateral (select * from repository_commits c where c.project_id = ${projectId} and c.sha = p.sha limit 1) c
       where c.generation >= (select min(generation) from candidate))
    select sha from walk where sha = any(${wanted}::text[]) limit ${wanted.length}`.execute(db);
  return new Set(rows.map((row) => row.sha));
}

/**
 * The tips among `tips` that contain `sha` (`git branch --contains`): their ancestors down to
 * `sha`'s generation loaded in one statement, then each commit judged once — it contains
 * `sha` when it is `sha` or a parent does — in an iterative walk, so a long history does not
 * exhaust the stack.
 */
export async function tipsContaining<T extends { readonly sha: string }>(db: Db, projectId: number, sha: string, tips: readonly T[]): Promise<T[]> {
  if (tips.length === 0) return [];
  const { rows } = await sql<{ sha: string; parents: string[] }>`with recursive ${aboveOf(projectId, sha, tips.map((tip) => tip.sha))} select sha, parents from walk`.execute(db);
  const graph = new Map(rows.map((row) => [row.sha, row.parents]));
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
      const parents = graph.get(current) ?? [];
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
