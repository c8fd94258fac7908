import { Hono } from 'hono';
import { newDiscussionId, newNoteId } from '../../../commands/notes.js';
import { run } from '../../../commands/kernel/run.js';
import { forbidden } from '../../../domain/errors.js';
import { notes } from '../../../domain/notes/aggregate.js';
import { noteableKey } from '../../../domain/notes/events.js';
import { sortNotes } from '../../../projections/notes/queries.js';
import { requireUser, requireWriter } from '../../kernel/auth.js';
import type { AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { paginateArray } from '../../kernel/pagination.js';
import { declared, optional, required, t, withDefault } from '../../kernel/params.js';
import { authorizeAdminNote, createdAtParam, noteById, noteOf, presentNotes } from './find.js';
import { NOTES_KINDS, type NoteableKind } from './noteables.js';

/**
 * GitLab 12.10's API::Notes for every kind of NOTES_KINDS (`/projects/:id/merge_requests/
 * :noteable_id/notes`, EE's `/groups/:id/epics/:noteable_id/notes`): list, get, create, update,
 * delete. Every route authenticates first (`before { authenticate! }`); the noteable is found
 * in the caller's scope (404 when hidden), then the note.
 */

const listShape = {
  order_by: withDefault(t.values(['created_at', 'updated_at']), 'created_at'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
};
const createShape = { body: required(t.string()), created_at: optional(t.string()) };
const updateShape = { body: required(t.string()) };

/** `requires :noteable_id, type: Integer` (and `:note_id`). */
const ON_NOTEABLE = { pathIds: ['noteable_id'] } as const;
const ON_NOTE = { pathIds: ['noteable_id', 'note_id'] } as const;

function routesOf(kind: NoteableKind) {
  const base = `/${kind.parent}/:id/${kind.path}/:noteable_id/notes`;
  const word = kind.type === 'MergeRequest' ? 'merge request' : kind.type.toLowerCase();
  const of = `of ${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
  return new Hono<AppEnv>()
    .get(base, documented({ summary: `List the notes ${of}`, params: listShape, ...ON_NOTEABLE, responses: { 200: 'Note[]', 404: 'Error' } }), async (c) => {
      const auth = await requireUser(c);
      const { order_by, sort } = await declared(c, listShape, ON_NOTEABLE);
      const noteable = await kind.find(c, auth);
      return c.json(await presentNotes(c, await paginateArray(c, sortNotes(await noteable.notes(), order_by, sort))));
    })
    .get(`${base}/:note_id`, documented({ summary: `Get a note ${of}`, ...ON_NOTE, responses: { 200: 'Note', 404: 'Error' } }), async (c) => {
      const auth = await requireUser(c);
      await declared(c, {}, ON_NOTE);
      const noteable = await kind.find(c, auth);
      const [note] = await presentNotes(c, [await noteOf(c, noteable)]);
      return c.json(note);
    })
    .post(base, documented({ summary: `Add a note ${of}`, params: createShape, ...ON_NOTEABLE, responses: { 201: 'Note', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const { body, created_at } = await declared(c, createShape, ON_NOTEABLE);
      const noteable = await kind.find(c, w.auth);
      if (!noteable.can('create_note')) throw forbidden();
      const id = await newNoteId(w);
      const createdAt = createdAtParam(created_at, w.ctx.now(), noteable.can('set_note_created_at'));
      await run(w, notes, noteableKey(noteable.data), {
        type: 'AddNote',
        id,
        noteable: noteable.data,
        noteableIid: noteable.iid,
        noteableTitle: noteable.title,
        authorId: w.auth.user.id,
        body,
        noteType: null,
        discussionId: newDiscussionId(),
        position: null,
        lineCode: null,
        createdAt,
      });
      return c.json((await presentNotes(c, [await noteById(noteable, id)]))[0], 201);
    })
    .put(`${base}/:note_id`, documented({ summary: `Edit a note ${of}`, params: updateShape, ...ON_NOTE, responses: { 200: 'Note', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const { body } = await declared(c, updateShape, ON_NOTE);
      const noteable = await kind.find(c, w.auth);
      const note = await noteOf(c, noteable);
      authorizeAdminNote(noteable, note);
      await run(w, notes, noteableKey(noteable.data), { type: 'EditNote', id: note.id, noteable: noteable.data, body });
      return c.json((await presentNotes(c, [await noteById(noteable, note.id)]))[0]);
    })
    .delete(`${base}/:note_id`, documented({ summary: `Delete a note ${of}`, ...ON_NOTE, responses: { 204: null, ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      await declared(c, {}, ON_NOTE);
      const noteable = await kind.find(c, w.auth);
      const note = await noteOf(c, noteable);
      authorizeAdminNote(noteable, note);
      await run(w, notes, noteableKey(noteable.data), { type: 'DeleteNote', id: note.id, noteable: noteable.data });
      return c.body(null, 204);
    });
}

export const noteRoutes = NOTES_KINDS.reduce((app, kind) => app.route('/', routesOf(kind)), new Hono<AppEnv>());
