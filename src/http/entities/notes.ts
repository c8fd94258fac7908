import type { Config } from '../../config.js';
import type { Db } from '../../database/database.js';
import type { NoteView } from '../../projections/notes/queries.js';
import { toUserBasic, type UserReferenceRow } from './users.js';

/** The authors (and resolvers) of some notes, in one query. */
export async function noteUsers(db: Db, notes: readonly NoteView[]): Promise<Map<number, UserReferenceRow>> {
  const ids = new Set<number>();
  for (const n of notes) {
    ids.add(n.authorId);
    if (n.resolvedById !== null) ids.add(n.resolvedById);
  }
  if (ids.size === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name', 'username', 'state', 'avatar_url', 'email']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

const userOf = (users: ReadonlyMap<number, UserReferenceRow>, id: number | null, config: Config) => {
  const row = id === null ? undefined : users.get(id);
  return row ? toUserBasic(row, config) : null;
};

/**
 * Entities::Note (GitLab 12.10): `position` for a diff note only, `resolved` and `resolved_by`
 * for a resolvable note only, `noteable_iid` for issues and merge requests.
 */
export function toNote(note: NoteView, users: ReadonlyMap<number, UserReferenceRow>, config: Config) {
  const out: Record<string, unknown> = {
    id: note.id,
    type: note.type,
    body: note.body,
    attachment: null,
    author: userOf(users, note.authorId, config),
    created_at: note.createdAt,
    updated_at: note.updatedAt,
    system: note.system,
    noteable_id: note.noteableId,
    noteable_type: note.noteableType,
  };
  if (note.type === 'DiffNote' && note.position) out.position = positionOf(note);
  out.resolvable = note.resolvable;
  if (note.resolvable) {
    out.resolved = note.resolvedById !== null;
    out.resolved_by = userOf(users, note.resolvedById, config);
  }
  out.noteable_iid = note.noteableType === 'MergeRequest' || note.noteableType === 'Issue' ? note.noteableIid : null;
  return out;
}

/** Gitlab::Diff::Position#to_h: the base formatter's fields, then the text or image ones. */
function positionOf(note: NoteView) {
  const p = note.position!;
  const base = { base_sha: p.base_sha, start_sha: p.start_sha, head_sha: p.head_sha, old_path: p.old_path, new_path: p.new_path, position_type: p.position_type };
  return p.position_type === 'text'
    ? Object.assign(base, { old_line: p.old_line ?? null, new_line: p.new_line ?? null })
    : Object.assign(base, { width: p.width ?? null, height: p.height ?? null, x: p.x ?? null, y: p.y ?? null });
}

/** Entities::Discussion: its id, whether it is an individual note, its notes. */
export function toDiscussion(notes: readonly NoteView[], users: ReadonlyMap<number, UserReferenceRow>, config: Config) {
  const first = notes[0]!;
  return {
    id: first.discussionId,
    individual_note: first.type === null,
    notes: notes.map((n) => toNote(n, users, config)),
  };
}

/** Notes grouped into discussions, in the order of their first notes. */
export function discussionsOf(notes: readonly NoteView[]): NoteView[][] {
  const byId = new Map<string, NoteView[]>();
  for (const note of notes) {
    const discussion = byId.get(note.discussionId);
    if (discussion) discussion.push(note);
    else byId.set(note.discussionId, [note]);
  }
  return [...byId.values()];
}

/** A legacy diff note's line: its file's path (LegacyDiffNote#diff_file), Diff::Line#line and #type (#diff_line). */
export interface CommitNoteLine {
  readonly path: string;
  readonly line: number | null;
  readonly line_type: 'new' | 'old' | null;
}

/** Entities::CommitNote: a commit's comment, with the line a legacy diff note is on. */
export function toCommitNote(note: NoteView, users: ReadonlyMap<number, UserReferenceRow>, config: Config, on?: CommitNoteLine) {
  return {
    note: note.body,
    path: on?.path ?? null,
    line: on?.line ?? null,
    line_type: on?.line_type ?? null,
    author: userOf(users, note.authorId, config),
    created_at: note.createdAt,
  };
}
