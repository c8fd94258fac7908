import { type Decider, unhandled } from '../decider.js';
import { badRequest, notFound, recordNotFound } from '../errors.js';
import { isResolvable, type NoteableData, type NoteEvent, type NotePosition, type NoteType } from './events.js';

/**
 * The notes of one noteable: who wrote each, its discussion, whether it is resolved. The
 * routes have found the noteable and asked the caller's abilities (src/http/routes/notes/);
 * the decider holds what only the stream knows — a discussion exists and may be replied to,
 * a note is this noteable's, a body is not blank.
 */

// ───────────────────────────── State ─────────────────────────────

export interface NoteRecord {
  readonly authorId: number;
  readonly type: NoteType | null;
  readonly discussionId: string;
  readonly position: NotePosition | null;
  readonly lineCode: string | null;
  readonly resolvable: boolean;
  readonly resolved: boolean;
}

export interface NotesState {
  readonly key: string;
  /** Live notes by id, in creation order. */
  readonly notes: ReadonlyMap<number, NoteRecord>;
}

// ───────────────────────────── Commands ─────────────────────────────

export type NoteCommand =
  | {
      readonly type: 'AddNote';
      readonly id: number;
      readonly noteable: NoteableData;
      readonly noteableIid: number | null;
      readonly noteableTitle: string;
      readonly authorId: number;
      readonly body: string;
      readonly noteType: NoteType | null;
      readonly discussionId: string;
      readonly position: NotePosition | null;
      readonly lineCode: string | null;
      readonly createdAt: string;
    }
  | {
      readonly type: 'ReplyToDiscussion';
      readonly id: number;
      readonly noteable: NoteableData;
      readonly noteableIid: number | null;
      readonly noteableTitle: string;
      readonly authorId: number;
      readonly body: string;
      readonly discussionId: string;
      readonly createdAt: string;
    }
  | { readonly type: 'CopyNotes'; readonly noteable: NoteableData; readonly notes: readonly CopiedNote[] }
  | { readonly type: 'EditNote'; readonly id: number; readonly noteable: NoteableData; readonly body: string }
  | { readonly type: 'DeleteNote'; readonly id: number; readonly noteable: NoteableData }
  | { readonly type: 'ResolveDiscussion'; readonly discussionId: string; readonly noteable: NoteableData; readonly byId: number; readonly resolved: boolean }
  | { readonly type: 'ResolveNote'; readonly id: number; readonly noteable: NoteableData; readonly byId: number; readonly resolved: boolean };

/** A moved issue's note as the new issue gets it (src/commands/issue-move-notes.ts). */
export interface CopiedNote {
  readonly id: number;
  readonly copiedFromId: number;
  readonly authorId: number;
  readonly body: string;
  readonly system: boolean;
  readonly type: NoteType | null;
  readonly discussionId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

// ───────────────────────────── Rules ─────────────────────────────

/** Note's `validates :note, presence: true`, answered by the API as `bad_request!("Note #{note.errors.messages}")`. */
const blankBody = () => badRequest(`Note {:note=>["can't be blank"]}`);
/** Ruby's `blank?` on a string: empty or whitespace only. */
const isBlank = (text: string) => /^[\s\u00a0]*$/.test(text);

/** The notes of a discussion, in creation order. */
export const discussionNotes = (state: NotesState, discussionId: string) => [...state.notes].filter(([, n]) => n.discussionId === discussionId);

function noteOf(state: NotesState, id: number): NoteRecord {
  const note = state.notes.get(id);
  // `noteable.notes.find(note_id)`: ActiveRecord::RecordNotFound.
  if (!note) throw recordNotFound('Note');
  return note;
}

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: NotesState, event: NoteEvent): NotesState {
  switch (event.type) {
    case 'NoteAdded': {
      const d = event.data;
      const notes = new Map(state.notes);
      const resolvable = isResolvable(d.type, d.noteable_type);
      notes.set(d.id, { authorId: d.author_id, type: d.type, discussionId: d.discussion_id, position: d.position, lineCode: d.line_code, resolvable, resolved: resolvable && d.resolved });
      return { ...state, notes };
    }
    case 'NoteConvertedToDiscussion': {
      const note = state.notes.get(event.data.id);
      if (!note) return state;
      const notes = new Map(state.notes);
      notes.set(event.data.id, { ...note, type: 'DiscussionNote', resolvable: isResolvable('DiscussionNote', event.data.noteable_type) });
      return { ...state, notes };
    }
    case 'NoteCopied': {
      // A copied system note is no more editable than the original (Note#editable?).
      if (event.data.system) return state;
      const d = event.data;
      const notes = new Map(state.notes);
      notes.set(d.id, { authorId: d.author_id, type: d.type, discussionId: d.discussion_id, position: null, lineCode: null, resolvable: false, resolved: false });
      return { ...state, notes };
    }
    case 'NoteEdited':
      return state;
    case 'NoteDeleted': {
      const notes = new Map(state.notes);
      notes.delete(event.data.id);
      return { ...state, notes };
    }
    case 'NotesResolved':
    case 'NotesUnresolved': {
      const notes = new Map(state.notes);
      for (const id of event.data.note_ids) {
        const note = notes.get(id);
        if (note) notes.set(id, { ...note, resolved: event.type === 'NotesResolved' });
      }
      return { ...state, notes };
    }
    default:
      return unhandled(event);
  }
}

function decide(command: NoteCommand, state: NotesState): NoteEvent[] {
  switch (command.type) {
    case 'AddNote': {
      if (isBlank(command.body)) throw blankBody();
      return [
        {
          type: 'NoteAdded',
          data: {
            id: command.id,
            ...command.noteable,
            author_id: command.authorId,
            body: command.body,
            type: command.noteType,
            discussion_id: command.discussionId,
            position: command.position,
            line_code: command.lineCode,
            noteable_iid: command.noteableIid,
            noteable_title: command.noteableTitle,
            created_at: command.createdAt,
            resolved: false,
          },
        },
      ];
    }
    case 'ReplyToDiscussion': {
      const notes = discussionNotes(state, command.discussionId);
      if (notes.length === 0) throw notFound('Discussion');
      const [firstId, first] = notes[0]!;
      if (isBlank(command.body)) throw blankBody();
      // An individual note (type null) becomes a discussion when replied to (can_convert_to_discussion?).
      const converted: NoteEvent[] = first.type === null ? [{ type: 'NoteConvertedToDiscussion', data: { id: firstId, ...command.noteable } }] : [];
      const resolvable = isResolvable(first.type ?? 'DiscussionNote', command.noteable.noteable_type);
      const onDiff = first.type === 'DiffNote' || first.type === 'LegacyDiffNote';
      const resolved = resolvable && notes.some(([, n]) => n.resolvable) && notes.every(([, n]) => !n.resolvable || n.resolved);
      return [
        ...converted,
        {
          type: 'NoteAdded',
          data: {
            id: command.id,
            ...command.noteable,
            author_id: command.authorId,
            body: command.body,
            // DiffDiscussion#reply_attributes: a reply to a diff note is a diff note at the same position;
            // LegacyDiffDiscussion's, a legacy diff note on the same line.
            type: onDiff ? first.type : 'DiscussionNote',
            discussion_id: command.discussionId,
            position: first.type === 'DiffNote' ? first.position : null,
            line_code: onDiff ? first.lineCode : null,
            noteable_iid: command.noteableIid,
            noteable_title: command.noteableTitle,
            created_at: command.createdAt,
            resolved,
          },
        },
      ];
    }
    case 'CopyNotes':
      // Notes::CopyService's `note.dup`: what the note was, on the new noteable (a moved issue's notes are never on a diff).
      return command.notes.map((n) => ({
        type: 'NoteCopied' as const,
        data: {
          id: n.id,
          ...command.noteable,
          copied_from_id: n.copiedFromId,
          author_id: n.authorId,
          body: n.body,
          system: n.system,
          type: n.type,
          discussion_id: n.discussionId,
          created_at: n.createdAt,
          updated_at: n.updatedAt,
        },
      }));
    case 'EditNote': {
      noteOf(state, command.id);
      if (isBlank(command.body)) throw blankBody();
      return [{ type: 'NoteEdited', data: { id: command.id, ...command.noteable, body: command.body } }];
    }
    case 'DeleteNote':
      noteOf(state, command.id);
      return [{ type: 'NoteDeleted', data: { id: command.id, ...command.noteable } }];
    case 'ResolveNote': {
      const note = noteOf(state, command.id);
      if (!note.resolvable) throw badRequest('Note is not resolvable');
      return resolution(command.noteable, note.discussionId, [[command.id, note]], command.resolved, command.byId);
    }
    case 'ResolveDiscussion': {
      const notes = discussionNotes(state, command.discussionId);
      if (notes.length === 0) throw notFound('Discussion');
      return resolution(command.noteable, command.discussionId, notes, command.resolved, command.byId);
    }
    default:
      return unhandled(command);
  }
}

/** Resolving or unresolving the resolvable notes among `notes` that are not so already. */
function resolution(noteable: NoteableData, discussionId: string, notes: readonly (readonly [number, NoteRecord])[], resolved: boolean, byId: number): NoteEvent[] {
  const ids = notes.filter(([, n]) => n.resolvable && n.resolved !== resolved).map(([id]) => id);
  if (ids.length === 0) return [];
  return resolved
    ? [{ type: 'NotesResolved', data: { ...noteable, discussion_id: discussionId, note_ids: ids, by_id: byId } }]
    : [{ type: 'NotesUnresolved', data: { ...noteable, discussion_id: discussionId, note_ids: ids } }];
}

export const noteDecider: Decider<NoteCommand, NoteEvent, NotesState, string> = {
  initialState: (key) => ({ key, notes: new Map() }),
  evolve,
  decide,
};
