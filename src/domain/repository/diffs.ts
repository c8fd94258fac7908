import { diffArrays } from 'diff';
import { compactChanges } from './diff-compact.js';
import type { FileEntry, FileMap } from './files.js';

/**
 * The changes between two trees as GitLab's Gitlab::Git::Diff entries (what Gitaly's
 * CommitDiff answers: `git diff --find-renames` per file, without the `diff --git`, `index`,
 * `---` and `+++` header lines). The line diff is the `diff` library's (Myers, as git's
 * default), its groups then slid as git's indent heuristic does (./diff-compact.ts); the
 * hunks are cut and labelled as git's xdiff does: 3 lines of context, hunks
 * closer than 2 × 3 lines joined, `@@ -a,b +c,d @@ <function line>` with git's default
 * funcname rule, "\ No newline at end of file".
 */

export interface DiffEntry {
  readonly old_path: string;
  readonly new_path: string;
  /** Octal text, `"0"` for the missing side (Gitaly's `old_mode.to_s(8)`). */
  readonly a_mode: string;
  readonly b_mode: string;
  readonly new_file: boolean;
  readonly renamed_file: boolean;
  readonly deleted_file: boolean;
  readonly diff: string;
}

/** One changed path before its text is computed: blobs by SHA, null for the missing side. */
export interface FileChange {
  readonly oldPath: string;
  readonly newPath: string;
  readonly before: FileEntry | null;
  readonly after: FileEntry | null;
}

export const CONTEXT_LINES = 3;

/** git's buffer_is_binary: a NUL byte in the first 8000 bytes. */
const FIRST_FEW_BYTES = 8000;
export const isBinary = (content: Uint8Array) => content.subarray(0, FIRST_FEW_BYTES).includes(0);

/** Byte order of full paths, which is git's tree order (a directory compares as `name/`). */
const byPath = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

const isRegular = (mode: string) => mode === '100644' || mode === '100755';

/**
 * The changed paths between two file maps, in git's order, with exact-content renames paired
 * as git's diffcore-rename does: a deleted path and a new one with the same blob (both
 * regular files or both links); of several sources, the one with the same basename first,
 * each source used once. Renames by similarity (git's 50 % rule) are not detected: such a
 * file is a deletion and a creation.
 */
export function treeChanges(before: FileMap, after: FileMap): FileChange[] {
  const changes: FileChange[] = [];
  const deleted: [string, FileEntry][] = [];
  const created: [string, FileEntry][] = [];
  for (const path of [...new Set([...before.keys(), ...after.keys()])].sort(byPath)) {
    const [old, now] = [before.get(path), after.get(path)];
    if (old && now) {
      if (old.sha !== now.sha || old.mode !== now.mode) {
        // A file turned into a link (or back) is a deletion and a creation in git.
        if (isRegular(old.mode) !== isRegular(now.mode)) {
          changes.push({ oldPath: path, newPath: path, before: old, after: null }, { oldPath: path, newPath: path, before: null, after: now });
        } else changes.push({ oldPath: path, newPath: path, before: old, after: now });
      }
    } else if (old) deleted.push([path, old]);
    else if (now) created.push([path, now]);
  }
  const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  const used = new Set<string>();
  const renamedTo = new Map<string, string>();
  for (const [path, entry] of created) {
    const candidates = deleted.filter(([from, e]) => !used.has(from) && e.sha === entry.sha && isRegular(e.mode) === isRegular(entry.mode));
    const source = candidates.find(([from]) => basename(from) === basename(path)) ?? candidates[0];
    if (source) {
      used.add(source[0]);
      renamedTo.set(path, source[0]);
    }
  }
  for (const [path, entry] of deleted) if (!used.has(path)) changes.push({ oldPath: path, newPath: path, before: entry, after: null });
  for (const [path, entry] of created) {
    const from = renamedTo.get(path);
    changes.push(from === undefined ? { oldPath: path, newPath: path, before: null, after: entry } : { oldPath: from, newPath: path, before: before.get(from)!, after: entry });
  }
  // diffcore-rename leaves a rename where its destination was; the queue is in path order.
  return changes.sort((a, b) => byPath(a.newPath, b.newPath) || (a.before === null ? 1 : 0) - (b.before === null ? 1 : 0));
}

/** The blobs whose contents the diffs of these changes need. */
export function neededBlobs(changes: readonly FileChange[]): string[] {
  const shas = new Set<string>();
  for (const change of changes) {
    if (change.before && change.after && change.before.sha === change.after.sha) continue;
    if (change.before) shas.add(change.before.sha);
    if (change.after) shas.add(change.after.sha);
  }
  return [...shas];
}

const EMPTY = new Uint8Array();
const decoder = new TextDecoder();

/** The entries of the changes, given the blobs' contents (a missing blob reads as empty). */
export function diffEntries(changes: readonly FileChange[], contents: ReadonlyMap<string, Uint8Array>): DiffEntry[] {
  return changes.map((change) => {
    const { oldPath, newPath, before, after } = change;
    let text = '';
    if (!(before && after && before.sha === after.sha)) {
      const old = before ? (contents.get(before.sha) ?? EMPTY) : EMPTY;
      const now = after ? (contents.get(after.sha) ?? EMPTY) : EMPTY;
      if (isBinary(old) || isBinary(now)) {
        // git's notice, which Gitaly passes on as the patch.
        text = `Binary files ${before ? `a/${oldPath}` : '/dev/null'} and ${after ? `b/${newPath}` : '/dev/null'} differ\n`;
      } else text = unifiedDiff(decoder.decode(old), decoder.decode(now));
    }
    // Entities::Diff's members in its order: a version stores this JSON, and its reads answer the text as stored (jsonWithMembers).
    return {
      old_path: oldPath,
      new_path: newPath,
      a_mode: before?.mode ?? '0',
      b_mode: after?.mode ?? '0',
      new_file: before === null,
      renamed_file: oldPath !== newPath,
      deleted_file: after === null,
      diff: text,
    };
  });
}

// ───────────────────────────── Unified diff ─────────────────────────────

/** Lines as git's xdiff records them: each with its `\n`, the last one maybe without. */
function splitLines(text: string): string[] {
  const lines: string[] = [];
  for (let at = 0; at < text.length; ) {
    const newline = text.indexOf('\n', at);
    const end = newline < 0 ? text.length : newline + 1;
    lines.push(text.slice(at, end));
    at = end;
  }
  return lines;
}

/** git's default funcname (xemit.c def_ff): a line starting with a letter, `_` or `$`, at most 80 bytes, trailing blanks cut. */
function functionLine(line: string): string | undefined {
  if (!/^[A-Za-z_$]/.test(line)) return undefined;
  // A UTF-16 unit is at most 3 bytes of UTF-8: a line this short is never cut.
  if (line.length * 3 <= 80) return line.replace(/[ \t\n\v\f\r]+$/, '');
  const bytes = Buffer.from(line);
  // Cut at 80 bytes then trim trailing whitespace (git's isspace: space, \t, \n, \v, \f, \r).
  return decoder.decode(bytes.subarray(0, 80)).replace(/[ \t\n\v\f\r]+$/, '');
}

/** The script's ops, one per line of the unified script: kept, removed, added. */
const KEPT = 0;
const REMOVED = 1;
const ADDED = 2;
const MARK = [' ', '-', '+'] as const;

/** The unified diff body of two texts, from the first hunk header on ('' when equal). */
export function unifiedDiff(oldText: string, newText: string, context = CONTEXT_LINES): string {
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  // Which lines the library's diff changed on each side, then slid where git puts them.
  const oldChanged = oldLines.map(() => false);
  const newChanged = newLines.map(() => false);
  // xdiff's xdl_trim_ends: the lines both ends share are not given to the line diff (most
  // changes are a few lines of a longer file, and the library's cost grows with the lines).
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) prefix++;
  let suffix = 0;
  while (suffix < oldLines.length - prefix && suffix < newLines.length - prefix && oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]) suffix++;
  let [o, n] = [prefix, prefix];
  for (const part of diffArrays(oldLines.slice(prefix, oldLines.length - suffix), newLines.slice(prefix, newLines.length - suffix))) {
    const count = part.value.length;
    if (part.removed) for (let k = 0; k < count; k++) oldChanged[o++] = true;
    else if (part.added) for (let k = 0; k < count; k++) newChanged[n++] = true;
    else [o, n] = [o + count, n + count];
  }
  compactChanges({ lines: oldLines, changed: oldChanged }, { lines: newLines, changed: newChanged });
  // The script in git's order: a change's removed lines, then its added ones; each op with
  // the line it stands at on each side.
  const kinds: number[] = [];
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let ops = 0;
  let firstChange = -1;
  [o, n] = [0, 0];
  while (o < oldLines.length || n < newLines.length) {
    const kind = o < oldLines.length && oldChanged[o] ? REMOVED : n < newLines.length && newChanged[n] ? ADDED : KEPT;
    if (kind !== KEPT && firstChange < 0) firstChange = ops;
    kinds[ops] = kind;
    oldAt[ops] = o;
    newAt[ops] = n;
    ops++;
    if (kind !== ADDED) o++;
    if (kind !== REMOVED) n++;
  }
  if (firstChange < 0) return '';
  // Group the changes into hunks: a gap of more than 2 × context unchanged lines splits.
  const hunks: [number, number][] = [];
  let [start, end] = [firstChange, firstChange];
  for (let i = firstChange + 1; i < ops; i++) {
    if (kinds[i] === KEPT) continue;
    if (i - end - 1 > 2 * context) {
      hunks.push([start, end]);
      start = i;
    }
    end = i;
  }
  hunks.push([start, end]);

  let out = '';
  for (const [first, last] of hunks) {
    const from = Math.max(0, first - context);
    const to = Math.min(ops - 1, last + context);
    let [oldCount, newCount] = [0, 0];
    for (let i = from; i <= to; i++) {
      if (kinds[i] !== ADDED) oldCount++;
      if (kinds[i] !== REMOVED) newCount++;
    }
    const oldStart = oldAt[from]!;
    const newStart = newAt[from]!;
    // xdl_emit_hunk_hdr: a count of 1 is left out; an empty range starts at the line before.
    const range = (start: number, count: number) => (count === 0 ? `${start},0` : count === 1 ? `${start + 1}` : `${start + 1},${count}`);
    let func = '';
    for (let i = oldStart - 1; i >= 0; i--) {
      const found = functionLine(oldLines[i]!);
      if (found !== undefined) {
        func = ` ${found}`;
        break;
      }
    }
    out += `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@${func}\n`;
    for (let i = from; i <= to; i++) {
      const line = kinds[i] === ADDED ? newLines[newAt[i]!]! : oldLines[oldAt[i]!]!;
      out += MARK[kinds[i]!] + line;
      if (line.charCodeAt(line.length - 1) !== 10) out += '\n\\ No newline at end of file\n';
    }
  }
  return out;
}

// ───────────────────────────── Limits ─────────────────────────────

/**
 * GitLab 12's limits on a diff collection: Gitlab::Git::DiffCollection's defaults (100 files,
 * 5000 lines: the collection stops at the file that overflows) and Gitlab::Git::Diff's
 * SIZE_LIMIT (a patch of 100 KB or more is "too large": its text is emptied).
 */
export interface DiffLimits {
  readonly maxFiles: number;
  readonly maxLines: number;
  readonly maxPatchBytes: number;
}

export const DIFF_LIMITS: DiffLimits = { maxFiles: 100, maxLines: 5000, maxPatchBytes: 100 * 1024 };

/**
 * Commit.max_diff_options, what MergeRequestDiff#save_diffs collects a version's diff with:
 * Commit::DIFF_HARD_LIMIT_FILES and DIFF_HARD_LIMIT_LINES (a larger diff is the version's
 * `overflow`, its real_size "1000+"), and the same size limit of one patch.
 */
export const VERSION_DIFF_LIMITS: DiffLimits = { maxFiles: 1000, maxLines: 50_000, maxPatchBytes: DIFF_LIMITS.maxPatchBytes };

export function limitDiffs(entries: readonly DiffEntry[], limits: DiffLimits = DIFF_LIMITS): { diffs: DiffEntry[]; overflow: boolean } {
  const diffs: DiffEntry[] = [];
  let lines = 0;
  for (const entry of entries) {
    const pruned = Buffer.byteLength(entry.diff) >= limits.maxPatchBytes ? { ...entry, diff: '' } : entry;
    lines += pruned.diff === '' ? 0 : pruned.diff.split('\n').length - 1;
    if (diffs.length >= limits.maxFiles || lines > limits.maxLines) return { diffs, overflow: true };
    diffs.push(pruned);
  }
  return { diffs, overflow: false };
}

/** Only the size limit of one patch (for lists GitLab reads without collection limits). */
export const pruneTooLarge = (entries: readonly DiffEntry[], maxPatchBytes: number = DIFF_LIMITS.maxPatchBytes): DiffEntry[] =>
  entries.map((entry) => (Buffer.byteLength(entry.diff) >= maxPatchBytes ? { ...entry, diff: '' } : entry));
