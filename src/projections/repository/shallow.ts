import type { Db } from '../../database/database.js';
import { parseTag } from '../../domain/repository/objects.js';
import { INFINITE_DEPTH, type ShallowRequest, type ShallowUpdate, UploadPackError } from '../../domain/repository/upload-pack.js';
import { CommitGraph, reachableOnlyFrom } from './commit-graph.js';
import { objectTypes, reachableFromTips } from './reachable.js';

/**
 * The shallow boundary of a fetch (upload-pack.c: deepen, deepen_by_rev_list, send_shallow,
 * send_unshallow; shallow.c: get_shallow_commits, get_shallow_commits_by_rev_list), read from
 * the commit graph index. What it walks is what the request asks: `deepen N` reads the N
 * levels below the wants (or below the client's shallow commits with `deepen-relative`),
 * `deepen-since` the commits since then, `deepen-not` down to the excluded refs; a load of the
 * graph is a window of generations (CommitGraph), so the statements grow with the log of
 * the depth. See docs/repository.md, "Shallow clones and fetches".
 */

export interface ShallowPlan extends ShallowUpdate {
  /** Commits whose parents the pack's walk does not follow: the new boundary and every shallow commit of the client. */
  readonly cut: ReadonlySet<string>;
  /** Wants to add: the parents of the commits the client unshallows. */
  readonly wants: readonly string[];
  /** What the client unshallows: it has them, so they bound the pack. */
  readonly edges: readonly string[];
}

export interface ShallowInput {
  readonly request: ShallowRequest;
  /** The validated wants (objects of the project). */
  readonly wants: readonly string[];
  /** The refs' commits (deepen-relative counts from the client's shallow commits they reach). */
  readonly tips: readonly string[];
  /** `deepen-not`'s refs, resolved to commits. */
  readonly deepenNot: readonly string[];
}

/** Wants peeled to commits (deref_tag); a tree or blob has no history. */
async function wantedCommits(db: Db, projectId: number, wants: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  let level = [...new Set(wants)];
  for (let depth = 0; depth < 16 && level.length > 0; depth++) {
    const types = await objectTypes(db, projectId, level);
    const tags = level.filter((sha) => types.get(sha) === 'tag');
    out.push(...level.filter((sha) => types.get(sha) === 'commit'));
    if (tags.length === 0) break;
    const rows = await db.selectFrom('repository_objects').select(['content']).where('project_id', '=', projectId).where('sha', 'in', tags).execute();
    level = rows.map((row) => parseTag(row.content).object);
  }
  return [...new Set(out)];
}

/**
 * get_shallow_commits: a breadth-first walk from `heads` (each at depth 1), so each commit is
 * met first at its least depth; those below `depth` are in (NOT_SHALLOW), those at it are
 * the boundary (SHALLOW), nothing deeper is read.
 */
async function byDepth(graph: CommitGraph, heads: readonly string[], depth: number): Promise<{ inside: Set<string>; boundary: Set<string> }> {
  const inside = new Set<string>();
  const boundary = new Set<string>();
  const seen = new Set<string>();
  let level = heads.filter((sha) => !seen.has(sha) && seen.add(sha));
  for (let at = 1; level.length > 0; at++) {
    await graph.load(level);
    const next: string[] = [];
    for (const sha of level) {
      const node = graph.get(sha);
      if (!node) continue;
      if (at >= depth) {
        boundary.add(sha);
        continue;
      }
      inside.add(sha);
      for (const parent of node.parents) {
        if (seen.has(parent)) continue;
        seen.add(parent);
        next.push(parent);
      }
    }
    level = next;
  }
  return { inside, boundary };
}

/**
 * The shallow update a request asks for, and what it means for the pack; null when the
 * request neither deepens nor comes from a shallow client. Throws git's errors (an invalid
 * shallow object, nothing selected by deepen-since / deepen-not).
 */
export async function planShallow(db: Db, projectId: number, input: ShallowInput): Promise<ShallowPlan | null> {
  const { request } = input;
  const deepening = request.depth > 0 || request.deepenSince !== null || request.deepenNot.length > 0;
  if (!deepening && request.shallows.length === 0) return null;
  // process_shallow: an object the repository lacks is skipped; one that is no commit refused.
  const types = await objectTypes(db, projectId, request.shallows);
  const client = request.shallows.filter((sha) => types.has(sha));
  const wrong = client.find((sha) => types.get(sha) !== 'commit');
  if (wrong) throw new UploadPackError(`invalid shallow object ${wrong}`);
  const clientSet = new Set(client);

  let boundary = new Set<string>();
  let inside = new Set<string>();
  const graph = new CommitGraph(db, projectId, Math.max(8, Math.min(request.depth, 64)));
  if (request.depth === INFINITE_DEPTH) {
    // deepen(INFINITE_DEPTH) on a whole repository: every shallow commit of the client is unshallowed.
    inside = clientSet;
  } else if (request.depth > 0) {
    const heads = request.deepenRelative ? [...(await reachableFromTips(db, projectId, input.tips, client))] : await wantedCommits(db, projectId, input.wants);
    ({ inside, boundary } = await byDepth(graph, heads, request.deepenRelative ? request.depth + 1 : request.depth));
  } else if (deepening) {
    // get_shallow_commits_by_rev_list: `rev-list --max-age=<since> <wants> --not <deepen-not refs>`,
    // the border being the selected commits with a parent that is not selected.
    const since = request.deepenSince;
    const selected = await reachableOnlyFrom(graph, await wantedCommits(db, projectId, input.wants), input.deepenNot, {
      admit: since === null ? undefined : (node) => node.time >= since,
    });
    // shallow.c: "no commits selected for shallow requests"
    if (selected.size === 0) throw new UploadPackError('no commits selected for shallow requests');
    for (const sha of selected) {
      if (graph.get(sha)!.parents.some((parent) => !selected.has(parent))) boundary.add(sha);
      else inside.add(sha);
    }
  }

  // send_shallow: the boundary the client does not already have as shallow (a commit also met higher up is not one).
  const shallow = [...boundary].filter((sha) => !inside.has(sha) && !clientSet.has(sha));
  // send_unshallow: the client's shallow commits now inside; their parents are wanted.
  const unshallow = client.filter((sha) => inside.has(sha));
  await graph.load(unshallow);
  const wants = [...new Set(unshallow.flatMap((sha) => graph.get(sha)?.parents ?? []))];
  return { shallow, unshallow, cut: new Set([...shallow, ...client]), wants, edges: unshallow };
}
