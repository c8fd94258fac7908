import type { Db } from '../../database/database.js';
import { notFound } from '../../domain/errors.js';
import { buildTrees, type FileEntry, type FileMap } from '../../domain/repository/files.js';
import { blobsToRead, contentReader, type MergeConflict, mergePath, mergeTrees, same } from '../../domain/repository/merge.js';
import { type GitObject, MODES, tree, type TreeEntry } from '../../domain/repository/objects.js';
import { mergeBase } from './history.js';
import type { CommitGraph } from './commit-graph.js';
import { type CommitView, findCommit, ObjectReader, readFiles } from './queries.js';

/**
 * The three-way merge of two commits of a project's repository, read from its objects:
 * whether they merge (GitLab's `can_be_merged?`) for a merge request's status, which a GET
 * shows, and the merged tree the merge commit (src/commands/repository-merge.ts) is made of.
 */

export interface Mergeability {
  readonly canBeMerged: boolean;
  /** The conflicted paths, sorted (empty when it merges). */
  readonly conflicts: readonly MergeConflict[];
  /** The best common ancestor, or null for unrelated histories (then merged against the empty tree). */
  readonly mergeBase: string | null;
}

/** A three-way merge of trees: the merged root tree and the objects it needs written. */
export interface MergedTree {
  /** The merged root tree's SHA (null when there are conflicts: nothing is to be committed). */
  readonly root: string | null;
  /** The trees the merge wrote (those of the directories both sides changed); the others are reused as they are. */
  readonly trees: GitObject[];
  /** The blobs the line merges wrote. */
  readonly blobs: GitObject[];
  /** Sorted by path. */
  readonly conflicts: MergeConflict[];
}

export interface Merged extends MergedTree {
  readonly mergeBase: string | null;
}

/**
 * The three-way merge of `sourceSha` into `targetSha` (ours: the target); `graph`: a commit
 * graph the caller's walks of the same commits loaded (mergeBase); `objects`: a reader the
 * caller's reads of the same trees share.
 */
export async function mergeCommits(db: Db, projectId: number, sourceSha: string, targetSha: string, graph?: CommitGraph, objects = new ObjectReader(db, projectId)): Promise<Merged> {
  const base = await mergeBase(db, projectId, targetSha, sourceSha, graph);
  // The three commits in one statement (the merge base is null when either is no commit).
  const commits = new Map((await objects.commits(base === null ? [sourceSha, targetSha] : [sourceSha, targetSha, base])).map((c) => [c.sha, c]));
  const [source, target] = [commits.get(sourceSha), commits.get(targetSha)];
  if (!source || !target) throw notFound('Commit');
  return { ...(await mergeTreesOf(db, projectId, base === null ? null : (commits.get(base)?.tree ?? null), target.tree, source.tree, objects)), mergeBase: base };
}

/**
 * Can `sourceSha` be merged into `targetSha` without conflicts (GitLab's
 * `repository.can_be_merged?(source_sha, target_branch)`)? A source already in the
 * target merges (to the target's tree). Throws notFound('Commit') when either is not a
 * commit of the project.
 */
export async function mergeability(db: Db, projectId: number, sourceSha: string, targetSha: string, graph?: CommitGraph, objects?: ObjectReader): Promise<Mergeability> {
  const merged = await mergeCommits(db, projectId, sourceSha, targetSha, graph, objects);
  return { canBeMerged: merged.conflicts.length === 0, conflicts: merged.conflicts, mergeBase: merged.mergeBase };
}

/**
 * A commit's change applied to `onto` (git cherry-pick, mainline 1 for a merge commit),
 * or taken back from it (git revert): the three-way merge of `onto` with the commit
 * against its first parent (cherry-pick), or with its first parent against the commit
 * (revert). A root commit's parent is the empty tree.
 */
export async function pickCommit(db: Db, projectId: number, picked: CommitView, onto: CommitView, direction: 'cherry_pick' | 'revert'): Promise<MergedTree> {
  const parent = picked.parents[0] === undefined ? undefined : await findCommit(db, projectId, picked.parents[0]);
  const before = parent?.tree ?? null;
  const [base, theirs] = direction === 'cherry_pick' ? [before, picked.tree] : [picked.tree, before];
  return mergeTreesOf(db, projectId, base, onto.tree, theirs);
}

// ───────────────────────────── The merge of trees, by subtrees ─────────────────────────────

/** A directory both sides changed, differently: its three trees (null: absent) and what each of its names becomes. */
interface Dir {
  readonly prefix: string;
  readonly trees: readonly [string | null, string | null, string | null];
  readonly slots: Slot[];
}

type Side = TreeEntry | undefined;
type Slot =
  /** Taken as it is (one side's change, or the same on both, a subtree never read). */
  | { readonly kind: 'entry'; readonly entry: TreeEntry }
  /** A directory on every side that has it, changed on both: merged a level down. */
  | { readonly kind: 'dir'; readonly name: string; readonly dir: Dir }
  /** A file (not a tree) on every side that has it, changed on both. */
  | { readonly kind: 'file'; readonly name: string; readonly sides: readonly [Side, Side, Side] }
  /** A file on one side and a directory on another: merged file by file, as a flat merge. */
  | { readonly kind: 'mixed'; readonly path: string; readonly sides: readonly [Side, Side, Side]; flat?: [Map<string, FileEntry>, Map<string, FileEntry>, Map<string, FileEntry>] };

const isTree = (entry: TreeEntry) => entry.mode === MODES.tree;
const fileOf = (entry: Side): FileEntry | undefined => entry && { mode: entry.mode, sha: entry.sha };
const byPath = (x: MergeConflict, y: MergeConflict) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0);

/**
 * The three-way merge of three trees (base, ours, theirs; null: the empty tree), as
 * `mergeTrees` merges their flat file lists and `buildTrees` writes the result, but by
 * subtrees: a name the same on both sides, or changed on one side only, is taken as it is
 * (a directory's tree is reused without being read); only the directories both sides
 * changed are read, a level at a time (one query per level), and written anew. A name that
 * is a file on one side and a directory on another is merged as the flat merge does it
 * (its file/directory conflicts included). The cost is that of the changes, not of the tree.
 */
export async function mergeTreesOf(
  db: Db,
  projectId: number,
  base: string | null,
  ours: string,
  theirs: string | null,
  objects = new ObjectReader(db, projectId),
): Promise<MergedTree> {
  const none: MergedTree = { root: null, trees: [], blobs: [], conflicts: [] };
  // The whole tree taken from one side (git writes the same tree the flat merge would).
  if (ours === theirs || theirs === base) return { ...none, root: ours };
  if (ours === base && theirs !== null) return { ...none, root: theirs };
  const top: Dir = { prefix: '', trees: [base, ours, theirs], slots: [] };
  let level = [top];
  const mixed: Extract<Slot, { kind: 'mixed' }>[] = [];
  const files: { path: string; slot: Extract<Slot, { kind: 'file' }> }[] = [];
  while (level.length > 0) {
    const read = await objects.trees(level.flatMap((dir) => dir.trees.filter((sha): sha is string => sha !== null)));
    const next: Dir[] = [];
    for (const dir of level) {
      const [o, a, b] = dir.trees.map((sha) => new Map((sha === null ? [] : (read.get(sha) ?? [])).map((e) => [e.name, e])));
      for (const name of new Set([...o!.keys(), ...a!.keys(), ...b!.keys()])) {
        const sides = [o!.get(name), a!.get(name), b!.get(name)] as const;
        const [eo, ea, eb] = sides;
        const take = same(ea, eb) || same(eb, eo) ? ea : same(ea, eo) ? eb : null;
        if (take !== null) {
          if (take) dir.slots.push({ kind: 'entry', entry: take });
          continue;
        }
        const present = sides.filter((e): e is TreeEntry => e !== undefined);
        if (present.every(isTree)) {
          const sub: Dir = { prefix: `${dir.prefix}${name}/`, trees: [eo?.sha ?? null, ea?.sha ?? null, eb?.sha ?? null], slots: [] };
          dir.slots.push({ kind: 'dir', name, dir: sub });
          next.push(sub);
        } else if (!present.some(isTree)) {
          const slot = { kind: 'file', name, sides } as const;
          dir.slots.push(slot);
          files.push({ path: `${dir.prefix}${name}`, slot });
        } else {
          const slot: Extract<Slot, { kind: 'mixed' }> = { kind: 'mixed', path: `${dir.prefix}${name}`, sides };
          dir.slots.push(slot);
          mixed.push(slot);
        }
      }
    }
    level = next;
  }
  // The flat files of the names that are a file on one side and a directory on another (rare).
  // One side after another: inside a command's transaction, a read that fails ends it, and no
  // other read may go out after its rollback.
  for (const slot of mixed) {
    const flat: Map<string, FileEntry>[] = [];
    for (const entry of slot.sides) {
      if (entry === undefined) flat.push(new Map());
      else if (!isTree(entry)) flat.push(new Map([[slot.path, fileOf(entry)!]]));
      else flat.push(new Map([...(await readFiles(db, projectId, entry.sha))].map(([path, file]) => [`${slot.path}/${path}`, file])));
    }
    slot.flat = flat as [Map<string, FileEntry>, Map<string, FileEntry>, Map<string, FileEntry>];
  }
  const wanted = new Set<string>();
  for (const { slot } of files) for (const entry of slot.sides) if (entry) wanted.add(entry.sha);
  for (const slot of mixed) for (const sha of blobsToRead(...slot.flat!)) wanted.add(sha);
  const read = contentReader(await objects.blobs([...wanted]));

  const blobs: GitObject[] = [];
  const conflicts: MergeConflict[] = [];
  const merged = new Map<Slot, TreeEntry | undefined>();
  for (const { path, slot } of files) {
    const [o, a, b] = slot.sides.map(fileOf);
    const result = mergePath(o, a, b, read);
    if (result.conflict) conflicts.push({ path, kind: result.conflict });
    if (result.blob) blobs.push(result.blob);
    merged.set(slot, result.entry && { name: slot.name, mode: result.entry.mode, sha: result.entry.sha });
  }
  const trees: GitObject[] = [];
  for (const slot of mixed) {
    const flat = mergeTrees(...slot.flat!, new Map(wantedContents(slot.flat!, read)));
    conflicts.push(...flat.conflicts);
    blobs.push(...flat.blobs);
    if (flat.conflicts.length > 0) continue;
    const name = slot.path.slice(slot.path.lastIndexOf('/') + 1);
    const file = flat.files.get(slot.path);
    if (file) {
      merged.set(slot, { name, mode: file.mode, sha: file.sha });
    } else if (flat.files.size > 0) {
      const built = buildTrees(new Map([...flat.files].map(([path, entry]) => [path.slice(slot.path.length + 1), entry])));
      trees.push(...built.trees);
      merged.set(slot, { name, mode: MODES.tree, sha: built.root });
    }
  }
  if (conflicts.length > 0) return { ...none, blobs, conflicts: conflicts.sort(byPath) };

  // The changed directories written bottom-up; one left empty is dropped, as git drops it.
  const write = (dir: Dir, root: boolean): string | null => {
    const entries: TreeEntry[] = [];
    for (const slot of dir.slots) {
      if (slot.kind === 'entry') entries.push(slot.entry);
      else if (slot.kind === 'dir') {
        const sha = write(slot.dir, false);
        if (sha !== null) entries.push({ name: slot.name, mode: MODES.tree, sha });
      } else {
        const entry = merged.get(slot);
        if (entry) entries.push(entry);
      }
    }
    if (entries.length === 0 && !root) return null;
    const object = tree(entries);
    trees.push(object);
    return object.sha;
  };
  const root = write(top, true)!;
  return { root, trees, blobs, conflicts };
}

/** The contents a flat merge of three file maps needs, from the reader. */
function wantedContents(flat: readonly [FileMap, FileMap, FileMap], read: (sha: string) => Uint8Array): [string, Uint8Array][] {
  return blobsToRead(...flat).map((sha) => [sha, read(sha)]);
}
