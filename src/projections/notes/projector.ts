import type { Insertable } from 'kysely';
import type { Db } from '../../database/database.js';
import { isResolvable, type NoteableType } from '../../domain/notes/events.js';
import { defineProjector } from '../projector.js';
import type { NotesTable } from './tables.js';

/** `user_notes_count` of a noteable moved by one note (a commit has no id: it has no count). */
async function count(trx: Db, noteableType: NoteableType, noteableId: number | null, by: 1 | -1) {
  if (noteableId === null) return;
  await trx
    .insertInto('note_counts')
    .values({ noteable_type: noteableType, noteable_id: noteableId, user_notes_count: by })
    .onConflict((oc) => oc.columns(['noteable_type', 'noteable_id']).doUpdateSet((eb) => ({ user_notes_count: eb('note_counts.user_notes_count', '+', by) })))
    .execute();
}

const forgetNoteable = async (trx: Db, noteableType: NoteableType, noteableId: number) => {
  await trx.deleteFrom('notes').where('noteable_type', '=', noteableType).where('noteable_id', '=', noteableId).execute();
  await trx.deleteFrom('note_counts').where('noteable_type', '=', noteableType).where('noteable_id', '=', noteableId).execute();
};

/**
 * The notes of snippets that are gone: a user's deletion takes the snippets they wrote (the
 * snippets projector, which applies it before this one and which a rebuild replays first:
 * `reads`; docs/snippets.md), and those snippets' notes go with them.
 */
async function forgetNotesOfGoneSnippets(trx: Db) {
  const gone = (table: 'notes' | 'note_counts') =>
    trx
      .deleteFrom(table)
      .where('noteable_type', '=', 'Snippet')
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('snippets').select('snippets.id').whereRef('snippets.id', '=', `${table}.noteable_id`))));
  await gone('note_counts').execute();
  await gone('notes').execute();
}

/** The fields every note event carries, as its row holds them. */
interface NoteFields {
  readonly id: number;
  readonly noteable_type: NotesTable['noteable_type'];
  readonly noteable_id: number | null;
  readonly commit_id: string | null;
  readonly project_id: number | null;
  readonly group_id: number | null;
  readonly author_id: number;
  readonly body: string;
  readonly type: NotesTable['type'];
  readonly discussion_id: string;
}

/** A note's row: the event's common fields and the rest (`rest`); a note already projected is left as it is. */
async function insertNote(trx: Db, data: NoteFields, rest: Omit<Insertable<NotesTable>, keyof NoteFields>): Promise<void> {
  const { id, noteable_type, noteable_id, commit_id, project_id, group_id, author_id, body, type, discussion_id } = data;
  await trx
    .insertInto('notes')
    .values({ id, noteable_type, noteable_id, commit_id, project_id, group_id, author_id, body, type, discussion_id, ...rest })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * Inline: the API reads what it just wrote. User notes only; each noteable's count of them is
 * kept beside (`user_notes_count`). A noteable's deletion, or its project's or group's, takes
 * its notes with it.
 */
export const notesProjector = defineProjector({
  name: 'notes',
  tables: ['notes', 'note_counts'],
  reads: ['snippets'],
  on: {
    NoteAdded: async ({ data, occurredAt }, trx) => {
      const resolved = isResolvable(data.type, data.noteable_type) && data.resolved;
      await insertNote(trx, data, {
        position: data.position === null ? null : JSON.stringify(data.position),
        line_code: data.line_code,
        resolvable: isResolvable(data.type, data.noteable_type),
        resolved_by_id: resolved ? data.author_id : null,
        resolved_at: resolved ? occurredAt.toISOString() : null,
        created_at: data.created_at,
        updated_at: data.created_at,
      });
      await count(trx, data.noteable_type, data.noteable_id, 1);
    },
    NoteCopied: async ({ data }, trx) => {
      await insertNote(trx, data, {
        position: null,
        line_code: null,
        system: data.system,
        resolvable: false,
        resolved_by_id: null,
        resolved_at: null,
        created_at: data.created_at,
        updated_at: data.updated_at,
      });
      // `user_notes_count` counts the copied user notes, not the system ones.
      if (!data.system) await count(trx, data.noteable_type, data.noteable_id, 1);
    },
    NoteConvertedToDiscussion: async ({ data }, trx) =>
      trx.updateTable('notes').set({ type: 'DiscussionNote', resolvable: isResolvable('DiscussionNote', data.noteable_type) }).where('id', '=', String(data.id)).execute(),
    NoteEdited: async ({ data, occurredAt }, trx) =>
      trx.updateTable('notes').set({ body: data.body, updated_at: occurredAt.toISOString() }).where('id', '=', String(data.id)).execute(),
    NoteDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('notes').where('id', '=', String(data.id)).execute();
      await count(trx, data.noteable_type, data.noteable_id, -1);
    },
    NotesResolved: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('notes')
        .set({ resolved_by_id: data.by_id, resolved_at: occurredAt.toISOString() })
        .where('id', 'in', data.note_ids.map(String))
        .execute(),
    NotesUnresolved: async ({ data }, trx) =>
      trx
        .updateTable('notes')
        .set({ resolved_by_id: null, resolved_at: null })
        .where('id', 'in', data.note_ids.map(String))
        .execute(),
  },
  cascades: {
    MergeRequestDeleted: async ({ data }, trx) => forgetNoteable(trx, 'MergeRequest', data.id),
    EpicDeleted: async ({ data }, trx) => forgetNoteable(trx, 'Epic', data.id),
    IssueDeleted: async ({ data }, trx) => forgetNoteable(trx, 'Issue', data.id),
    SnippetDeleted: async ({ data }, trx) => forgetNoteable(trx, 'Snippet', data.id),
    UserDeleted: async (_, trx) => forgetNotesOfGoneSnippets(trx),
    GroupDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('note_counts').where('noteable_type', '=', 'Epic').where('noteable_id', 'in', trx.selectFrom('notes').select('noteable_id').where('group_id', '=', data.id).where('noteable_id', 'is not', null).$narrowType<{ noteable_id: number }>()).execute();
      await trx.deleteFrom('notes').where('group_id', '=', data.id).execute();
    },
    ProjectDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('note_counts').where((eb) => eb.exists(eb.selectFrom('notes').select('notes.id').whereRef('notes.noteable_type', '=', 'note_counts.noteable_type').whereRef('notes.noteable_id', '=', 'note_counts.noteable_id').where('notes.project_id', '=', data.id))).execute();
      await trx.deleteFrom('notes').where('project_id', '=', data.id).execute();
    },
  },
});
