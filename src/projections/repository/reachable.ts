import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { MODES, parseTag, type GitObject, type ObjectType } from '../../domain/repository/objects.js';
import { CommitGraph, reachableOnlyFrom } from './commit-graph.js';
import { readTrees } from './queries.js';

/**
 * What a fetch sends (`git pack-objects --revs` behind `git-upload-pack`): the objects
 * reachable from the client's wants and not from what it has, planned from the object store
 * and then read back a page at a time for the pack stream. See docs/repository.md, "Cloning
 * and fetching with git".
 *
 * Every read is a statement per batch of SHAs (per tree depth for the trees), never one per
 * object: the commits come from the commit graph index (`rev-list wants ^haves`), the trees
 * and blobs from a walk down the new commits' trees beside the boundary commits' trees (git's
 * "uninteresting" edges), so an incremental fetch reads and sends what changed.
 */

/** SHAs per statement (a statement takes at most 65,535 parameters; an array is one). */
const BATCH = 1000;
/** A page of the pack stream holds at most this many objects and about this many bytes. */
const PAGE_OBJECTS = 500;
const PAGE_BYTES = 8 * 1024 * 1024;
const GITLINK = '160000';

export interface PlannedObject {
  readonly sha: string;
  readonly type: ObjectType;
}

export interface FetchRequest {
  readonly wants: readonly string[];
  /** The client's common objects (those of the project, any type): commits bound the walk. */
  readonly haves: readonly string[];
  /** `include-tag`: annotated tags whose commit is sent go along. */
  readonly includeTag: boolean;
  /**
   * A shallow fetch (./shallow.ts): `cut`, the commits whose parents are not walked (the
   * client's shallow commits and the new ones); `edges`, commits the client has besides its
   * haves (those it unshallows), excluded with them.
   */
  readonly shallow?: { readonly cut: ReadonlySet<string>; readonly edges: readonly string[] };
}

async function* batches<T>(items: readonly T[], size = BATCH): AsyncGenerator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** The type of each of `shas` that is an object of the project. */
export async function objectTypes(db: Db, projectId: number, shas: readonly string[]): Promise<Map<string, ObjectType>> {
  const types = new Map<string, ObjectType>();
  for await (const batch of batches([...new Set(shas)])) {
    const rows = await db.selectFrom('repository_objects').select(['sha', 'type']).where('project_id', '=', projectId).where('sha', 'in', batch).execute();
    for (const row of rows) types.set(row.sha, row.type);
  }
  return types;
}

/**
 * Which of `shas` are commits reachable from one of `tips` (allow-reachable-sha1-in-want):
 * one recursive statement over the commit graph from the tips down to the lowest generation
 * among the candidates, however many there are.
 */
export async function reachableFromTips(db: Db, projectId: number, tips: readonly string[], shas: readonly string[]): Promise<Set<string>> {
  const wanted = [...new Set(shas)];
  if (wanted.length === 0 || tips.length === 0) return new Set();
  const { rows } = await sql<{ sha: string }>`
    with recursive candidate as (
      select generation from repository_commits where project_id = ${projectId} and sha = any(${wanted}::text[])
    ), walk(sha, parents) as (
      select c.sha, c.parents from repository_commits c
       where c.project_id = ${projectId} and c.sha = any(${[...new Set(tips)]}::text[]) and c.generation >= (select min(generation) from candidate)
      union
      select c.sha, c.parents from walk w
        cross join lateral unnest(w.parents) as p(sha)
        join repository_commits c on c.project_id = ${projectId} and c.sha = p.sha
       where c.generation >= (select min(generation) from candidate))
    select sha from walk where sha = any(${wanted}::text[])`.execute(db);
  return new Set(rows.map((row) => row.sha));
}

/** Each commit's root tree, read from the commit's first header line (`tree <sha>`) in SQL. */
async function rootTrees(db: Db, projectId: number, commits: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of batches(commits)) {
    const { rows } = await sql<{ tree: string }>`
      select convert_from(substring(content from 6 for 40), 'UTF8') as tree from repository_objects
       where project_id = ${projectId} and type = 'commit' and sha = any(${batch}::text[])`.execute(db);
    for (const row of rows) out.push(row.tree);
  }
  return out;
}

/** Wants that are annotated tags, peeled a level per statement: the tags to send and what they name. */
async function peelTags(db: Db, projectId: number, tags: readonly string[]): Promise<{ tags: string[]; named: Map<string, ObjectType> }> {
  const sent = new Set<string>();
  const named = new Map<string, ObjectType>();
  let level = [...new Set(tags)];
  while (level.length > 0) {
    for (const sha of level) sent.add(sha);
    const next: string[] = [];
    for await (const batch of batches(level)) {
      const rows = await db.selectFrom('repository_objects').select(['sha', 'content']).where('project_id', '=', projectId).where('type', '=', 'tag').where('sha', 'in', batch).execute();
      for (const row of rows) {
        const tag = parseTag(row.content);
        if (tag.type === 'tag') {
          if (!sent.has(tag.object)) next.push(tag.object);
        } else named.set(tag.object, tag.type);
      }
    }
    level = next;
  }
  return { tags: [...sent], named };
}

/**
 * The objects a fetch sends, in pack order (commits newest first, then tags, trees, blobs).
 * `wants` must have been validated (objects of the project). Haves that are no commit of
 * the project bound nothing.
 *
 * Trees and blobs: those of the new commits, without what the boundary commits' trees hold
 * at the same paths — walked a depth at a time, the boundary's trees read only where a new
 * tree sits at the same path. A file moved to another directory in the new commits is sent
 * again (git would find it among the boundary's objects); the pack stays correct.
 */
export async function planFetch(db: Db, projectId: number, request: FetchRequest): Promise<PlannedObject[]> {
  const types = await objectTypes(db, projectId, request.wants);
  const wantCommits: string[] = [];
  const wantTrees: string[] = [];
  const wantBlobs: string[] = [];
  const wantTags: string[] = [];
  const sortByType = (sha: string, type: ObjectType | undefined) => {
    if (type === 'commit') wantCommits.push(sha);
    else if (type === 'tree') wantTrees.push(sha);
    else if (type === 'blob') wantBlobs.push(sha);
    else if (type === 'tag') wantTags.push(sha);
  };
  for (const sha of new Set(request.wants)) sortByType(sha, types.get(sha));
  const peeled = await peelTags(db, projectId, wantTags);
  for (const [sha, type] of peeled.named) sortByType(sha, type);

  // Commits: rev-list wants ^haves, newest (highest generation) first.
  const graph = new CommitGraph(db, projectId, 128);
  const cut = request.shallow?.cut;
  const extraEdges = request.shallow?.edges ?? [];
  const commits = [...(await reachableOnlyFrom(graph, wantCommits, [...request.haves, ...extraEdges], { cut }))];
  const node = (sha: string) => graph.get(sha)!;
  commits.sort((a, b) => node(b).generation - node(a).generation || node(b).time - node(a).time);
  const inPack = new Set(commits);
  const edges = new Set<string>();
  // A shallow commit's parents are not the client's: no boundary there.
  for (const sha of commits) if (!cut?.has(sha)) for (const parent of node(sha).parents) if (!inPack.has(parent) && graph.get(parent)) edges.add(parent);
  for (const sha of extraEdges) if (graph.get(sha)) edges.add(sha);

  const tags = new Set(peeled.tags);
  if (request.includeTag && commits.length > 0) {
    const annotated = await db
      .selectFrom('repository_tags')
      .select(['target', 'commit_sha'])
      .where('project_id', '=', projectId)
      .whereRef('target', '<>', 'commit_sha')
      .execute();
    for (const tag of annotated) if (inPack.has(tag.commit_sha)) tags.add(tag.target);
  }

  const [roots, edgeRoots] = await Promise.all([rootTrees(db, projectId, commits), rootTrees(db, projectId, [...edges])]);
  const { trees, blobs } = await walkTrees(db, projectId, [...roots, ...wantTrees], edgeRoots);
  for (const sha of wantBlobs) blobs.add(sha);

  return [
    ...commits.map((sha) => ({ sha, type: 'commit' as const })),
    ...[...tags].map((sha) => ({ sha, type: 'tag' as const })),
    ...[...trees].map((sha) => ({ sha, type: 'tree' as const })),
    ...[...blobs].map((sha) => ({ sha, type: 'blob' as const })),
  ];
}

/** The trees and blobs below `wanted` that the `uninteresting` trees do not hold at the same path. */
async function walkTrees(db: Db, projectId: number, wanted: readonly string[], uninteresting: readonly string[]): Promise<{ trees: Set<string>; blobs: Set<string> }> {
  const trees = new Set<string>();
  const blobs = new Set<string>();
  /** What the client has: the boundary's trees and their entries, as far as they were read. */
  const known = new Set<string>();
  // A level: path → the new trees there and the boundary's trees there.
  let level = new Map([['', { want: new Set(wanted), have: new Set(uninteresting) }]]);
  while (level.size > 0) {
    for (const { have } of level.values()) for (const sha of have) known.add(sha);
    const toRead: string[] = [];
    for (const [path, at] of level) {
      for (const sha of at.want) {
        if (known.has(sha) || trees.has(sha)) at.want.delete(sha);
        else {
          trees.add(sha);
          toRead.push(sha);
        }
      }
      if (at.want.size === 0) level.delete(path);
      else toRead.push(...at.have);
    }
    const read = await readTrees(db, projectId, toRead);
    const next = new Map<string, { want: Set<string>; have: Set<string> }>();
    const at = (path: string) => next.get(path) ?? next.set(path, { want: new Set(), have: new Set() }).get(path)!;
    // The boundary's entries first: a new tree's entry the client has is then known.
    for (const [path, { have }] of level) {
      for (const sha of have) {
        for (const entry of read.get(sha) ?? []) {
          known.add(entry.sha);
          if (entry.mode === MODES.tree) at(`${path}${entry.name}/`).have.add(entry.sha);
        }
      }
    }
    for (const [path, { want }] of level) {
      for (const sha of want) {
        for (const entry of read.get(sha) ?? []) {
          // A submodule's commit (mode 160000, which parseTree may read) is not this repository's.
          if (known.has(entry.sha) || (entry.mode as string) === GITLINK) continue;
          if (entry.mode === MODES.tree) at(`${path}${entry.name}/`).want.add(entry.sha);
          else blobs.add(entry.sha);
        }
      }
    }
    for (const [path, entry] of next) if (entry.want.size === 0) next.delete(path);
    level = next;
  }
  return { trees, blobs };
}

/**
 * The planned objects with their contents, in the plan's order, read a page at a time: the
 * page's sizes first, then its contents in statements of about PAGE_BYTES, so a pack of big
 * blobs holds one slice of them at a time. An object that is gone throws (the stream is cut).
 */
export async function* readPlanned(db: Db, projectId: number, planned: readonly PlannedObject[]): AsyncGenerator<GitObject> {
  for (let i = 0; i < planned.length; i += PAGE_OBJECTS) {
    const page = planned.slice(i, i + PAGE_OBJECTS);
    const sizes = new Map(
      (await db.selectFrom('repository_objects').select(['sha', 'size']).where('project_id', '=', projectId).where('sha', 'in', page.map((o) => o.sha)).execute()).map((row) => [row.sha, row.size]),
    );
    for (let from = 0; from < page.length; ) {
      let to = from;
      let bytes = 0;
      while (to < page.length && (to === from || bytes + (sizes.get(page[to]!.sha) ?? 0) <= PAGE_BYTES)) bytes += sizes.get(page[to++]!.sha) ?? 0;
      const slice = page.slice(from, to);
      const rows = await db.selectFrom('repository_objects').select(['sha', 'content']).where('project_id', '=', projectId).where('sha', 'in', slice.map((o) => o.sha)).execute();
      const contents = new Map(rows.map((row) => [row.sha, row.content]));
      for (const object of slice) {
        const content = contents.get(object.sha);
        if (!content) throw new Error(`object ${object.sha} is missing from project ${projectId}'s store`);
        yield { sha: object.sha, type: object.type, content };
      }
      from = to;
    }
  }
}
