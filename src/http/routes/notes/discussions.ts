import { Hono, type Context } from 'hono';
import { newDiscussionId, newNoteId } from '../../../commands/notes.js';
import { run } from '../../../commands/kernel/run.js';
import { badRequest, forbidden, notFound, paramErrors } from '../../../domain/errors.js';
import { notes } from '../../../domain/notes/aggregate.js';
import { noteableKey, type NotePosition } from '../../../domain/notes/events.js';
import type { NoteView } from '../../../projections/notes/queries.js';
import { discussionsOf } from '../../entities/notes.js';
import { requireUser, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { paginateArray } from '../../kernel/pagination.js';
import { declared, optional, required, t } from '../../kernel/params.js';
import { validatePosition } from './diff-position.js';
import { authorizeAdminNote, createdAtParam, noteById, noteOf, presentDiscussions, presentNotes } from './find.js';
import { DISCUSSION_KINDS, type Noteable, type NoteableKind } from './noteables.js';

/**
 * GitLab 12.10's API::Discussions for every kind of DISCUSSION_KINDS (merge requests, commits
 * under `repository/commits`, EE's epics): threads, replies, note edits and deletions, and
 * resolving a merge request's discussions. Authentication first, as `before { authenticate! }`.
 */

const createShape = { body: required(t.string()), created_at: optional(t.string()), position: optional(t.hash()) };
const replyShape = { body: required(t.string()), created_at: optional(t.string()) };
const editShape = { body: optional(t.string()), resolved: optional(t.boolean()) };
const resolveShape = { resolved: required(t.boolean()) };

const SHA = /^[0-9a-f]{40}$/;

/** `optional :position, type: Hash do … end`: its nested declarations, their failures as Grape words them. */
function positionParam(raw: Record<string, string>): NotePosition {
  const errors: string[] = [];
  for (const name of ['base_sha', 'start_sha', 'head_sha', 'position_type']) if (raw[name] === undefined) errors.push(`position[${name}] is missing`);
  if (raw.position_type !== undefined && raw.position_type !== 'text' && raw.position_type !== 'image') errors.push('position[position_type] does not have a valid value');
  const int = (name: string) => {
    const value = raw[name];
    if (value === undefined || value === '') return null;
    if (!/^\s*-?\d+\s*$/.test(value) || Math.abs(Number(value)) > 2_147_483_647) {
      errors.push(`position[${name}] is invalid`);
      return null;
    }
    return Number(value);
  };
  const position = {
    base_sha: raw.base_sha ?? '',
    start_sha: raw.start_sha ?? '',
    head_sha: raw.head_sha ?? '',
    old_path: raw.old_path ?? null,
    new_path: raw.new_path ?? null,
    position_type: raw.position_type as 'text' | 'image',
    old_line: int('old_line'),
    new_line: int('new_line'),
    width: int('width'),
    height: int('height'),
    x: int('x'),
    y: int('y'),
  };
  if (errors.length > 0) throw paramErrors(errors);
  // Position#complete?: SHAs that name no commit make no valid line.
  if (![position.base_sha, position.start_sha, position.head_sha].every((s) => SHA.test(s))) throw badRequest(`Note {:line_code=>["can't be blank", "must be a valid line code"]}`);
  return position;
}

/** `readable_discussion_notes(noteable, discussion_id)`, or "404 Discussion Not Found". */
async function discussionOf(c: Context, noteable: Noteable): Promise<NoteView[]> {
  const id = c.req.param('discussion_id') ?? '';
  const found = (await noteable.notes()).filter((n) => n.discussionId === id);
  if (found.length === 0) throw notFound('Discussion');
  return found;
}

function routesOf(kind: NoteableKind) {
  const base = `/${kind.parent}/:id/${kind.path}/:noteable_id/discussions`;
  // A commit's noteable_id is its SHA (`types: [Integer, String]`); the others' an integer.
  const on = (...more: string[]) => ({ pathIds: [...(kind.type === 'Commit' ? [] : ['noteable_id']), ...more] });
  const word = kind.type === 'MergeRequest' ? 'merge request' : kind.type.toLowerCase();
  const of = `of ${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
  const app = new Hono<AppEnv>()
    .get(base, documented({ summary: `List the discussions ${of}`, ...on(), responses: { 200: 'Discussion[]', 404: 'Error' } }), async (c) => {
      const auth = await requireUser(c);
      await declared(c, {}, on());
      const noteable = await kind.find(c, auth);
      return c.json(await presentDiscussions(c, await paginateArray(c, discussionsOf(await noteable.notes()))));
    })
    .get(`${base}/:discussion_id`, documented({ summary: `Get a discussion ${of}`, ...on(), responses: { 200: 'Discussion', 404: 'Error' } }), async (c) => {
      const auth = await requireUser(c);
      await declared(c, {}, on());
      const noteable = await kind.find(c, auth);
      return c.json((await presentDiscussions(c, [await discussionOf(c, noteable)]))[0]);
    })
    .post(base, documented({ summary: `Start a discussion ${of}`, params: createShape, ...on(), responses: { 201: 'Discussion', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const { body, created_at, position: rawPosition } = await declared(c, createShape, on());
      const noteable = await kind.find(c, w.auth);
      if (!noteable.can('create_note')) throw forbidden();
      let position: NotePosition | null = null;
      let lineCode: string | null = null;
      if (rawPosition !== undefined) {
        // DiffNote#supported?: forgelog's diff notes are on merge requests.
        if (!noteable.mergeRequest) throw badRequest(`Note {:noteable=>["doesn't support new-style diff notes"]}`);
        ({ position, lineCode } = await validatePosition(appContext(c).db, noteable.mergeRequest.id, positionParam(rawPosition)));
      }
      const id = await newNoteId(w);
      const discussionId = newDiscussionId();
      await run(w, notes, noteableKey(noteable.data), {
        type: 'AddNote',
        id,
        noteable: noteable.data,
        noteableIid: noteable.iid,
        noteableTitle: noteable.title,
        authorId: w.auth.user.id,
        body,
        noteType: position ? 'DiffNote' : 'DiscussionNote',
        discussionId,
        position,
        lineCode,
        createdAt: createdAtParam(created_at, w.ctx.now(), noteable.can('set_note_created_at')),
      });
      const discussion = (await noteable.notes()).filter((n) => n.discussionId === discussionId);
      return c.json((await presentDiscussions(c, [discussion]))[0], 201);
    })
    .post(`${base}/:discussion_id/notes`, documented({ summary: `Reply to a discussion ${of}`, params: replyShape, ...on(), responses: { 201: 'Note', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const { body, created_at } = await declared(c, replyShape, on());
      const noteable = await kind.find(c, w.auth);
      const discussion = await discussionOf(c, noteable);
      // A system note is an individual discussion that cannot become one (can_convert_to_discussion?).
      if (discussion[0]!.system) throw badRequest('Discussion can not be replied to.');
      if (!noteable.can('create_note')) throw forbidden();
      const id = await newNoteId(w);
      await run(w, notes, noteableKey(noteable.data), {
        type: 'ReplyToDiscussion',
        id,
        noteable: noteable.data,
        noteableIid: noteable.iid,
        noteableTitle: noteable.title,
        authorId: w.auth.user.id,
        body,
        discussionId: discussion[0]!.discussionId,
        createdAt: createdAtParam(created_at, w.ctx.now(), noteable.can('set_note_created_at')),
      });
      return c.json((await presentNotes(c, [await noteById(noteable, id)]))[0], 201);
    })
    .put(`${base}/:discussion_id/notes/:note_id`, documented({ summary: `Edit or resolve a note of a discussion ${of}`, params: editShape, ...on('note_id'), responses: { 200: 'Note', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const raw = await declared(c, editShape, { ...on('note_id'), checks: [exactlyOneOf] });
      const noteable = await kind.find(c, w.auth);
      const note = await noteOf(c, noteable);
      if (raw.resolved === undefined) {
        authorizeAdminNote(noteable, note);
        await run(w, notes, noteableKey(noteable.data), { type: 'EditNote', id: note.id, noteable: noteable.data, body: raw.body! });
      } else {
        // resolve_note: `authorize! :resolve_note, note` (its author too), then "Note is not resolvable".
        const own = noteable.viewer !== null && note.authorId === noteable.viewer.id;
        if (note.system || !(noteable.can('resolve_note') || own)) throw forbidden();
        if (!note.resolvable) throw badRequest('Note is not resolvable');
        await run(w, notes, noteableKey(noteable.data), { type: 'ResolveNote', id: note.id, noteable: noteable.data, byId: w.auth.user.id, resolved: raw.resolved });
      }
      return c.json((await presentNotes(c, [await noteById(noteable, note.id)]))[0]);
    })
    .delete(`${base}/:discussion_id/notes/:note_id`, documented({ summary: `Delete a note of a discussion ${of}`, ...on('note_id'), responses: { 204: null, ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      await declared(c, {}, on('note_id'));
      const noteable = await kind.find(c, w.auth);
      const note = await noteOf(c, noteable);
      authorizeAdminNote(noteable, note);
      await run(w, notes, noteableKey(noteable.data), { type: 'DeleteNote', id: note.id, noteable: noteable.data });
      return c.body(null, 204);
    });
  if (kind.type !== 'MergeRequest') return app;
  // Resolvable discussions are a merge request's (Noteable::RESOLVABLE_TYPES).
  return app.put(`${base}/:discussion_id`, documented({ summary: `Resolve or unresolve a discussion ${of}`, params: resolveShape, ...on(), responses: { 200: 'Discussion', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const { resolved } = await declared(c, resolveShape, on());
    const noteable = await kind.find(c, w.auth);
    const discussion = await discussionOf(c, noteable);
    // Discussion#can_resolve?: a resolvable discussion, and the merge request's author or resolve_note.
    if (!discussion.some((n) => n.resolvable) || !noteable.can('resolve_note')) throw forbidden();
    await run(w, notes, noteableKey(noteable.data), { type: 'ResolveDiscussion', discussionId: discussion[0]!.discussionId, noteable: noteable.data, byId: w.auth.user.id, resolved });
    return c.json((await presentDiscussions(c, [await discussionOf(c, noteable)]))[0]);
  });
}

/** `exactly_one_of :body, :resolved`. */
function exactlyOneOf(raw: Record<string, unknown>): string | undefined {
  const given = ['body', 'resolved'].filter((name) => raw[name] !== undefined);
  if (given.length === 0) return 'body, resolved are missing, exactly one parameter must be provided';
  if (given.length > 1) return 'body, resolved are mutually exclusive';
  return undefined;
}

export const discussionRoutes = DISCUSSION_KINDS.reduce((app, kind) => app.route('/', routesOf(kind)), new Hono<AppEnv>());
