import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { newDiscussionId, newNoteId } from '../../../commands/notes.js';
import { run } from '../../../commands/kernel/run.js';
import type { Db } from '../../../database/database.js';
import { notes } from '../../../domain/notes/aggregate.js';
import { noteableKey } from '../../../domain/notes/events.js';
import { pruneTooLarge, type DiffEntry } from '../../../domain/repository/diffs.js';
import type { NoteView } from '../../../projections/notes/queries.js';
import { diffCommits, resolveCommit } from '../../../projections/repository/queries.js';
import { noteUsers, toCommitNote, type CommitNoteLine } from '../../entities/notes.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { paginateArray } from '../../kernel/pagination.js';
import { declaration, optional, rawParams, required, t, withDefault } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { diffLineCode, diffLines, type DiffLine } from './diff-position.js';
import { noteById } from './find.js';
import { commitNoteables } from './noteables.js';

/**
 * GitLab 12.10's commit comments (API::Commits): `GET` and `POST
 * /projects/:id/repository/commits/:sha/comments`, Entities::CommitNote. The commits API asks
 * `download_code` of the project (403 without it) and nothing more; `:sha` is any ref.
 */

const noteShape = { note: required(t.string()), path: optional(t.string()) };
/** `given :path do requires :line …; requires :line_type … end` (whether `line` is there is checked apart). */
const lineShape = { line: optional(t.integer()), line_type: withDefault(t.values(['new', 'old']), 'new') };
const createShape = { ...noteShape, ...lineShape };

/** Commit#raw_diffs(limits: false): every file of the commit's diff against its first parent, a patch past the size limit emptied. */
async function commitDiffs(db: Db, projectId: number, sha: string): Promise<DiffEntry[]> {
  const commit = await resolveCommit(db, projectId, sha);
  return commit ? pruneTooLarge(await diffCommits(db, projectId, commit.parents[0] ?? null, commit.sha)) : [];
}

/** Diff::Line#line (the new position, a removed line's old one) and #type, with the file's path. */
const lineOf = (diff: DiffEntry, l: DiffLine): CommitNoteLine => ({ path: diff.new_path, line: l.newLine ?? l.oldLine, line_type: l.type });

/**
 * The line of the commit's diff a comment names (API::Commits): the first line of a file whose
 * new path is `path` with that new position and type (a removed line is matched by its
 * new-side position too), and its line code.
 */
function commentLine(diffs: readonly DiffEntry[], path: string, line: number, lineType: 'new' | 'old'): { code: string; on: CommitNoteLine } | null {
  for (const diff of diffs) {
    if (diff.new_path !== path) continue;
    const hit = diffLines(diff.diff).find((l) => l.newPos === line && l.type === lineType);
    if (hit) return { code: diffLineCode(diff.new_path, hit.newPos, hit.oldPos), on: lineOf(diff, hit) };
  }
  return null;
}

/**
 * LegacyDiffNote#diff_file and #diff_line: the first file of the commit's diff whose new path's
 * SHA-1 starts the note's line code, and its line with that code.
 */
async function legacyDiffLines(db: Db, projectId: number, sha: string, page: readonly NoteView[]): Promise<Map<string, CommitNoteLine>> {
  const wanted = new Set(page.flatMap((n) => (n.type === 'LegacyDiffNote' && n.lineCode !== null ? [n.lineCode] : [])));
  const found = new Map<string, CommitNoteLine>();
  if (wanted.size === 0) return found;
  const files = new Set([...wanted].map((code) => code.slice(0, code.indexOf('_'))));
  for (const diff of await commitDiffs(db, projectId, sha)) {
    const hash = createHash('sha1').update(diff.new_path).digest('hex');
    if (!files.delete(hash)) continue;
    for (const l of diffLines(diff.diff)) {
      const code = diffLineCode(diff.new_path, l.newPos, l.oldPos);
      if (wanted.has(code) && !found.has(code)) found.set(code, lineOf(diff, l));
    }
  }
  return found;
}

export const commitCommentRoutes = new Hono<AppEnv>()
  .get('/projects/:id/repository/commits/:sha/comments', documented({ summary: "List a commit's comments", auth: 'optional', responses: { 200: 'CommitNote[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const project = await userProject(c, auth, 'download_code');
    const commit = await commitNoteables.find(c, auth, 'sha');
    const { db, config } = appContext(c);
    const page = await paginateArray(c, await commit.notes());
    const users = await noteUsers(db, page);
    const lines = await legacyDiffLines(db, project.row.id, commit.data.commit_id ?? '', page);
    return c.json(page.map((n) => toCommitNote(n, users, config, n.lineCode === null ? undefined : lines.get(n.lineCode))));
  })
  .post('/projects/:id/repository/commits/:sha/comments', documented({ summary: 'Comment on a commit', params: createShape, responses: { 201: 'CommitNote', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const { note, path } = p.parse(noteShape);
    // Grape's `given :path`: a blank path asks for no line.
    const given = raw.path !== undefined && raw.path !== null && !(typeof raw.path === 'string' && raw.path.trim() === '');
    if (given && raw.line === undefined) p.check('line is missing');
    const on = given ? p.parse(lineShape) : undefined;
    p.done();
    const project = await userProject(c, w.auth, 'download_code');
    const commit = await commitNoteables.find(c, w.auth, 'sha');
    const { db, config } = appContext(c);
    // A comment on a line of the commit's diff is a legacy diff note there; on any other line, a plain note.
    const sha = commit.data.commit_id ?? '';
    const hit = path && on?.line !== undefined ? commentLine(await commitDiffs(db, project.row.id, sha), path, on.line, on.line_type) : null;
    const id = await newNoteId(w);
    await run(w, notes, noteableKey(commit.data), {
      type: 'AddNote',
      id,
      noteable: commit.data,
      noteableIid: null,
      noteableTitle: commit.title,
      authorId: w.auth.user.id,
      body: note,
      noteType: hit ? 'LegacyDiffNote' : null,
      discussionId: newDiscussionId(),
      position: null,
      lineCode: hit?.code ?? null,
      createdAt: w.ctx.now().toISOString(),
    });
    const created = await noteById(commit, id);
    return c.json(toCommitNote(created, await noteUsers(db, [created]), config, hit?.on), 201);
  });
