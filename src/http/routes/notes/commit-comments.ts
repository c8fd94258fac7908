import { Hono } from 'hono';
import { newDiscussionId, newNoteId } from '../../../commands/notes.js';
import { run } from '../../../commands/kernel/run.js';
import { notes } from '../../../domain/notes/aggregate.js';
import { noteableKey } from '../../../domain/notes/events.js';
import { noteUsers, toCommitNote } from '../../entities/notes.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { paginateArray } from '../../kernel/pagination.js';
import { declared, optional, required, t, withDefault } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { noteById } from './find.js';
import { commitNoteables } from './noteables.js';

/**
 * GitLab 12.10's commit comments (API::Commits): `GET` and `POST
 * /projects/:id/repository/commits/:sha/comments`, Entities::CommitNote. The commits API asks
 * `download_code` of the project (403 without it) and nothing more; `:sha` is any ref.
 */

const createShape = {
  note: required(t.string()),
  path: optional(t.string()),
  line: optional(t.integer()),
  line_type: withDefault(t.values(['new', 'old']), 'new'),
};

export const commitCommentRoutes = new Hono<AppEnv>()
  .get('/projects/:id/repository/commits/:sha/comments', documented({ summary: "List a commit's comments", auth: 'optional', responses: { 200: 'CommitNote[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    await userProject(c, auth, 'download_code');
    const commit = await commitNoteables.find(c, auth, 'sha');
    const { db, config } = appContext(c);
    const page = await paginateArray(c, await commit.notes());
    const users = await noteUsers(db, page);
    return c.json(page.map((n) => toCommitNote(n, users, config)));
  })
  .post('/projects/:id/repository/commits/:sha/comments', documented({ summary: 'Comment on a commit', params: createShape, responses: { 201: 'CommitNote', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const { note } = await declared(c, createShape);
    await userProject(c, w.auth, 'download_code');
    const commit = await commitNoteables.find(c, w.auth, 'sha');
    const id = await newNoteId(w);
    // GitLab matches `path`/`line` against the commit's diff to make a legacy diff note; forgelog's are plain notes (docs/notes.md).
    await run(w, notes, noteableKey(commit.data), {
      type: 'AddNote',
      id,
      noteable: commit.data,
      noteableIid: null,
      noteableTitle: commit.title,
      authorId: w.auth.user.id,
      body: note,
      noteType: null,
      discussionId: newDiscussionId(),
      position: null,
      lineCode: null,
      createdAt: w.ctx.now().toISOString(),
    });
    const { db, config } = appContext(c);
    const created = await noteById(commit, id);
    return c.json(toCommitNote(created, await noteUsers(db, [created]), config), 201);
  });
