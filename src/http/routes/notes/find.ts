import type { Context } from 'hono';
import { forbidden, recordNotFound } from '../../../domain/errors.js';
import type { NoteView } from '../../../projections/notes/queries.js';
import { noteUsers, toDiscussion, toNote } from '../../entities/notes.js';
import { appContext } from '../../kernel/context.js';
import { pathId } from '../../kernel/params.js';
import type { Noteable } from './noteables.js';

/** What the notes, discussions and award emoji routes share once they hold a noteable. */

/** `noteable.notes.find(params[:param])`: a user or system note of the noteable, or "404 Not found". */
export async function noteOf(c: Context, noteable: Noteable, param = 'note_id'): Promise<NoteView> {
  const id = pathId(c, param);
  const note = id === null ? undefined : (await noteable.notes()).find((n) => n.id === id);
  if (!note) throw recordNotFound('Note');
  return note;
}

/** A note of the noteable read back after a write. */
export const noteById = async (noteable: Noteable, id: number): Promise<NoteView> => (await noteable.notes()).find((n) => n.id === id)!;

/**
 * NotePolicy#admin_note: not a system note (`editable?`), and its author or `admin_note` on
 * the noteable; a locked discussion prevents it for non-members (the noteable says).
 */
export function canAdminNote(noteable: Noteable, note: NoteView): boolean {
  if (note.system) return false;
  const own = noteable.viewer !== null && note.authorId === noteable.viewer.id;
  return noteable.can('admin_note') || (own && noteable.can('create_note'));
}

/** `authorize! :admin_note, note`. */
export function authorizeAdminNote(noteable: Noteable, note: NoteView): void {
  if (!canAdminNote(noteable, note)) throw forbidden();
}

/** Entities::Note of some notes. */
export async function presentNotes(c: Context, notes: readonly NoteView[]) {
  const { db, config } = appContext(c);
  const users = await noteUsers(db, notes);
  return notes.map((n) => toNote(n, users, config));
}

/** Entities::Discussion of some discussions. */
export async function presentDiscussions(c: Context, discussions: readonly (readonly NoteView[])[]) {
  const { db, config } = appContext(c);
  const users = await noteUsers(db, discussions.flat());
  return discussions.map((d) => toDiscussion(d, users, config));
}

/** `created_at` as Rails assigns a string to a datetime: an unparsable one is none. */
export function createdAtParam(value: string | undefined, now: Date, allowed: boolean): string {
  if (!allowed || value === undefined) return now.toISOString();
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? now.toISOString() : at.toISOString();
}
