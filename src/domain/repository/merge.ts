import { diff3Merge } from 'node-diff3';
import type { FileEntry, FileMap } from './files.js';
import { blob, type GitObject, MODES } from './objects.js';

/**
 * A three-way merge of two commits' files against their merge base, file by file, as
 * `git merge` decides it (merge-ort without rename detection):
 *
 * - a path changed on one side only takes that side (content and mode, or its deletion);
 * - a path changed the same way on both sides takes it;
 * - a text file changed on both sides is merged line by line (node-diff3's diff3 merge,
 *   overlapping or touching changes are a conflict as in git's xdiff merge);
 * - else a conflict: `content` (the line merge conflicts, or a symlink changed both ways),
 *   `add/add` (added on both sides with different content or modes), `modify/delete` (changed on one
 *   side, deleted on the other), `binary` (a binary file changed both ways: git's test, a NUL
 *   in the first 8000 bytes), `mode` (the mode changed both ways), `file/directory` (one side
 *   has a file where the other has a directory).
 *
 * Pure: the caller gives the contents of the blobs `blobsToRead` names. A conflicted path
 * keeps our side in `files`; a merge with conflicts is not to be committed.
 */

export type ConflictKind = 'content' | 'add/add' | 'modify/delete' | 'binary' | 'mode' | 'file/directory';

export interface MergeConflict {
  readonly path: string;
  readonly kind: ConflictKind;
}

export interface TreeMerge {
  /** The merged files (a conflicted path keeps ours). */
  readonly files: Map<string, FileEntry>;
  /** The blobs the line merges wrote (not in any of the three trees). */
  readonly blobs: GitObject[];
  /** Sorted by path. */
  readonly conflicts: MergeConflict[];
}

export const same = (a: { readonly sha: string; readonly mode: string } | undefined, b: { readonly sha: string; readonly mode: string } | undefined) => a?.sha === b?.sha && a?.mode === b?.mode;

/** The paths changed on both sides, differently: the only ones whose contents the merge reads. */
function bothChanged(base: FileMap, ours: FileMap, theirs: FileMap): string[] {
  const paths = new Set([...base.keys(), ...ours.keys(), ...theirs.keys()]);
  return [...paths].filter((path) => {
    const [o, a, b] = [base.get(path), ours.get(path), theirs.get(path)];
    return !same(a, o) && !same(b, o) && !same(a, b);
  });
}

/** The blob SHAs whose contents `mergeTrees` needs (those of paths changed on both sides). */
export function blobsToRead(base: FileMap, ours: FileMap, theirs: FileMap): string[] {
  const shas = new Set<string>();
  for (const path of bothChanged(base, ours, theirs)) {
    for (const entry of [base.get(path), ours.get(path), theirs.get(path)]) if (entry) shas.add(entry.sha);
  }
  return [...shas];
}

/** git's buffer_is_binary: a NUL byte in the first 8000 bytes. */
export function isBinary(content: Uint8Array): boolean {
  return content.subarray(0, 8000).includes(0);
}

/** Lines with their terminators ("a\nb" is ["a\n", "b"]): a missing final newline is a change of the last line, as in git. */
function lines(content: Uint8Array): string[] {
  const text = Buffer.from(content).toString('latin1');
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The line merge of three texts, or null on a conflict. */
export function mergeText(base: Uint8Array, ours: Uint8Array, theirs: Uint8Array): Uint8Array | null {
  const out: string[] = [];
  for (const block of diff3Merge(lines(ours), lines(base), lines(theirs), { excludeFalseConflicts: true })) {
    if (block.conflict) return null;
    out.push(...block.ok!);
  }
  return Buffer.from(out.join(''), 'latin1');
}

/** The merged mode, or null when both sides changed it differently. */
function mergeMode(base: string, ours: string, theirs: string): string | null {
  if (ours === theirs || theirs === base) return ours;
  if (ours === base) return theirs;
  return null;
}

/** One path's three-way merge: the merged entry (undefined: deleted; a conflict keeps ours), a blob a line merge wrote, the conflict. */
export interface PathMerge {
  readonly entry: FileEntry | undefined;
  readonly blob?: GitObject;
  readonly conflict?: ConflictKind;
}

/**
 * The merge of one path changed on both sides, differently (see bothChanged): `read` gives
 * the contents of the blobs `blobsToRead` names for it.
 */
export function mergePath(o: FileEntry | undefined, a: FileEntry | undefined, b: FileEntry | undefined, read: (sha: string) => Uint8Array): PathMerge {
  const conflict = (kind: ConflictKind): PathMerge => ({ entry: a, conflict: kind });
  if (!a || !b) return conflict('modify/delete');
  // Added on both sides: the modes must agree too (git: add/add).
  const mode = o ? mergeMode(o.mode, a.mode, b.mode) : a.mode === b.mode ? a.mode : null;
  if (mode === null) return conflict(o ? 'mode' : 'add/add');
  if (a.sha === b.sha) return { entry: { mode: mode as FileEntry['mode'], sha: a.sha } };
  if (!o) return conflict('add/add');
  // The content changed on one side, the mode on the other.
  if (o.sha === a.sha || o.sha === b.sha) return { entry: { mode: mode as FileEntry['mode'], sha: o.sha === a.sha ? b.sha : a.sha } };
  if ([o.mode, a.mode, b.mode].includes(MODES.symlink)) return conflict('content');
  const [baseContent, ourContent, theirContent] = [read(o.sha), read(a.sha), read(b.sha)];
  if (isBinary(baseContent) || isBinary(ourContent) || isBinary(theirContent)) return conflict('binary');
  const merged = mergeText(baseContent, ourContent, theirContent);
  if (merged === null) return conflict('content');
  const object = blob(merged);
  return { entry: { mode: mode as FileEntry['mode'], sha: object.sha }, blob: object };
}

/** A reader of the given contents that throws for a blob not given (a caller's bug). */
export const contentReader = (contents: ReadonlyMap<string, Uint8Array>) => (sha: string) => {
  const content = contents.get(sha);
  if (content === undefined) throw new Error(`mergeTrees: the content of blob ${sha} was not given`);
  return content;
};

export function mergeTrees(base: FileMap, ours: FileMap, theirs: FileMap, contents: ReadonlyMap<string, Uint8Array>): TreeMerge {
  const files = new Map<string, FileEntry>();
  const blobs: GitObject[] = [];
  const conflicts: MergeConflict[] = [];
  const conflicted = new Set(bothChanged(base, ours, theirs));
  const read = contentReader(contents);
  for (const path of new Set([...base.keys(), ...ours.keys(), ...theirs.keys()])) {
    const [o, a, b] = [base.get(path), ours.get(path), theirs.get(path)];
    if (!conflicted.has(path)) {
      // One side's change, or the same change on both: the changed side (ours when neither changed).
      const take = same(a, o) ? b : a;
      if (take) files.set(path, take);
      continue;
    }
    const merged = mergePath(o, a, b, read);
    if (merged.conflict) conflicts.push({ path, kind: merged.conflict });
    if (merged.blob) blobs.push(merged.blob);
    if (merged.entry) files.set(path, merged.entry);
  }
  // A file where the merged tree has a directory (one side added `a`, the other `a/b`).
  const paths = [...files.keys()];
  for (const path of paths) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (files.has(prefix) && !conflicts.some((c) => c.path === prefix)) conflicts.push({ path: prefix, kind: 'file/directory' });
    }
  }
  conflicts.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return { files, blobs, conflicts };
}
