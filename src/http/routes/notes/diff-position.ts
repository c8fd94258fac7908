import { createHash } from 'node:crypto';
import { badRequest } from '../../../domain/errors.js';
import type { NotePosition } from '../../../domain/notes/events.js';
import type { Db } from '../../../database/database.js';
import { versionFiles, versionsOf } from '../../../projections/merge-requests/queries.js';

/**
 * A diff note's position on a merge request (Gitlab::Diff::Position): its refs must be one of
 * the merge request's versions (`merge_request_diff_for(diff_refs)`), and a text position must
 * name a line of that version's diff (DiffNote's line_code validation); the answer otherwise
 * is GitLab's `Note {:line_code=>["can't be blank", "must be a valid line code"]}`.
 */

const invalidLine = () => badRequest(`Note {:line_code=>["can't be blank", "must be a valid line code"]}`);

/** Gitlab::Git.diff_line_code. */
export const diffLineCode = (path: string, newPos: number, oldPos: number) => `${createHash('sha1').update(path).digest('hex')}_${oldPos}_${newPos}`;

export interface DiffLine {
  /** Gitlab::Diff::Line#type: `new` (added), `old` (removed), null (context). */
  readonly type: 'new' | 'old' | null;
  readonly oldLine: number | null;
  readonly newLine: number | null;
  /** The running positions Gitlab::Diff::Parser gives every line (for its line code). */
  readonly oldPos: number;
  readonly newPos: number;
}

/** Gitlab::Diff::Parser over one file's unified diff: its lines with their old and new numbers. */
export function diffLines(diff: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let oldPos = 0;
  let newPos = 0;
  for (const text of diff.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (hunk) {
      oldPos = Number(hunk[1]);
      newPos = Number(hunk[2]);
      continue;
    }
    if (text.startsWith('+')) lines.push({ type: 'new', oldLine: null, newLine: newPos, oldPos, newPos: newPos++ });
    else if (text.startsWith('-')) lines.push({ type: 'old', oldLine: oldPos, newLine: null, oldPos: oldPos++, newPos });
    else if (text.startsWith(' ')) lines.push({ type: null, oldLine: oldPos, newLine: newPos, oldPos: oldPos++, newPos: newPos++ });
  }
  return lines;
}

/** The position as stored, and its line code; or GitLab's 400. */
export async function validatePosition(db: Db, mergeRequestId: number, position: NotePosition): Promise<{ position: NotePosition; lineCode: string | null }> {
  const version = (await versionsOf(db, mergeRequestId)).find(
    (v) => v.head_commit_sha === position.head_sha && v.start_commit_sha === position.start_sha && (v.base_commit_sha ?? v.start_commit_sha) === position.base_sha,
  );
  if (position.position_type === 'image') {
    if (!version) throw invalidLine();
    return { position, lineCode: null };
  }
  const files = version ? await versionFiles(db, version.id) : undefined;
  const file = files?.find((f) => (position.new_path !== null && f.new_path === position.new_path) || (position.new_path === null && f.old_path === position.old_path));
  const oldLine = position.old_line ?? null;
  const newLine = position.new_line ?? null;
  const line = file ? diffLines(file.diff).find((l) => l.oldLine === oldLine && l.newLine === newLine) : undefined;
  if (!file || !line) throw invalidLine();
  return {
    position: { ...position, old_path: position.old_path ?? file.old_path, new_path: position.new_path ?? file.new_path, old_line: oldLine, new_line: newLine },
    lineCode: diffLineCode(file.new_path, line.newPos, line.oldPos),
  };
}
