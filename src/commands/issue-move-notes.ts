import { sql, type SqlBool } from 'kysely';
import type { Db } from '../database/database.js';
import type { CopiedNote } from '../domain/notes/decider.js';
import { notes } from '../domain/notes/aggregate.js';
import { noteableKey, type NoteableData } from '../domain/notes/events.js';
import { referencedProjectPath, rewriteReferences, writtenReferences, type WrittenReference } from '../domain/notes/reference-rewriter.js';
import { can } from '../domain/policy/can.js';
import { viewerOf } from '../projections/access.js';
import { canOnIssue, viewerSubjectsOn } from '../projections/issues/queries.js';
import type { IssueRow } from '../projections/issues/tables.js';
import { issueSystemNoteViews } from '../projections/notes/issue-system-notes.js';
import { userNotes, type NoteView } from '../projections/notes/queries.js';
import type { Writer } from './kernel/context.js';
import { spec } from './kernel/run.js';
import { newDiscussionId, newNoteId } from './notes.js';

/**
 * What Issues::MoveService (GitLab 12.10, Issuable::Clone::ContentRewriter) does to the moved
 * issue's text: its description and each of its notes, user and system, with the references
 * rewritten for the new project (src/domain/notes/reference-rewriter.ts), the notes copied onto
 * the new issue with their authors and times, each discussion kept as one discussion of the
 * new issue. The copies are events of the move's command (one transaction with the rest).
 */

/** A text as the new project reads it. */
export type ReferenceRewriter = (text: string | null) => string | null;

/**
 * Gitlab::Gfm::ReferenceRewriter over some texts written in `from`, for `to`: the references
 * of every text are looked up at once (their projects, then the issues, merge requests,
 * milestones and labels they name, each as the mover may read it).
 */
export async function referenceRewriter(w: Writer, byId: number, texts: readonly (string | null)[], from: string, to: string): Promise<ReferenceRewriter> {
  const db = w.ctx.db;
  const refs = texts.flatMap((t) => (t ? writtenReferences(t) : []));
  const found = new Set<string>();
  const key = (projectId: number, kind: string, n: number) => `${projectId}${kind}${n}`;
  const paths = [...new Set(refs.map((r) => referencedProjectPath(r.path, from)))];
  const projects = paths.length === 0 ? [] : await db.selectFrom('projects').select(['id', 'path_with_namespace']).where(sql<SqlBool>`lower(path_with_namespace) = any(${paths}::text[])`).where('pending_delete', '=', false).execute();
  const projectOf = new Map(projects.map((p) => [p.path_with_namespace.toLowerCase(), p]));
  if (projects.length > 0) {
    const user = await db.selectFrom('users').select(['id', 'is_admin', 'external']).where('id', '=', byId).executeTakeFirst();
    const subjects = await viewerSubjectsOn(db, viewerOf(user, w.ctx.now().toISOString().slice(0, 10)), projects.map((p) => p.id));
    const wanted = (kind: WrittenReference['kind']) => refs.filter((r) => r.kind === kind).flatMap((r) => projectOf.get(referencedProjectPath(r.path, from))?.id ?? []);
    const ids = projects.map((p) => p.id);
    const numbers = (kind: WrittenReference['kind']) => [...new Set(refs.filter((r) => r.kind === kind).map((r) => r.number))];
    const [issues, mergeRequests, milestones, labels] = await Promise.all([
      wanted('#').length === 0 ? [] : db.selectFrom('issues').select(['project_id', 'iid', 'author_id', 'assignee_ids', 'confidential']).where('project_id', 'in', ids).where('iid', 'in', numbers('#')).execute(),
      wanted('!').length === 0 ? [] : db.selectFrom('merge_requests').select(['project_id', 'iid']).where('project_id', 'in', ids).where('iid', 'in', numbers('!')).execute(),
      wanted('%').length === 0 ? [] : db.selectFrom('milestones').select(['project_id', 'iid']).where('project_id', 'in', ids).where('iid', 'in', numbers('%')).execute(),
      wanted('~').length === 0 ? [] : db.selectFrom('labels').select(['project_id', 'id']).where('project_id', 'in', ids).where('id', 'in', numbers('~')).execute(),
    ]);
    const readable = (projectId: number, ability: 'read_merge_request' | 'read_milestone' | 'read_label') => {
      const subject = subjects.get(projectId);
      return subject !== undefined && can(subject, ability);
    };
    for (const i of issues) {
      const subject = subjects.get(i.project_id);
      if (subject && canOnIssue(subject, i, 'read_issue')) found.add(key(i.project_id, '#', i.iid));
    }
    for (const m of mergeRequests) if (readable(m.project_id, 'read_merge_request')) found.add(key(m.project_id, '!', m.iid));
    for (const m of milestones) if (readable(m.project_id, 'read_milestone')) found.add(key(m.project_id, '%', m.iid));
    for (const l of labels) if (readable(l.project_id, 'read_label')) found.add(key(l.project_id, '~', l.id));
  }
  const resolve = (ref: WrittenReference) => {
    const project = projectOf.get(referencedProjectPath(ref.path, from));
    return project && found.has(key(project.id, ref.kind, ref.number)) ? project.path_with_namespace : null;
  };
  return (text) => (text === null ? null : rewriteReferences(text, to, resolve));
}

/** A noteable's notes oldest first, as they were created (Notes::CopyService copies them in that order). */
const inCreatedOrder = (views: readonly NoteView[]) => [...views].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id);

/** The original issue's notes: its user notes and copied notes, and the system notes its events make (the mentions of it are not copied: docs/issues.md). */
export async function notesToCopy(db: Db, original: IssueRow): Promise<NoteView[]> {
  const [user, system] = await Promise.all([userNotes(db, { type: 'Issue', id: original.id, iid: original.iid }), issueSystemNoteViews(db, original)]);
  return inCreatedOrder([...user, ...system]);
}

/**
 * The command copying `views` onto the new issue: new ids in order, one new discussion id for
 * each discussion of the original, bodies rewritten.
 */
export async function copyNotesSpec(w: Writer, views: readonly NoteView[], to: { id: number; projectId: number }, rewrite: ReferenceRewriter) {
  const discussions = new Map<string, string>();
  const copies: CopiedNote[] = [];
  for (const view of views) {
    let discussionId = discussions.get(view.discussionId);
    if (discussionId === undefined) {
      discussionId = newDiscussionId();
      discussions.set(view.discussionId, discussionId);
    }
    copies.push({
      id: await newNoteId(w),
      copiedFromId: view.id,
      authorId: view.authorId,
      body: rewrite(view.body) ?? '',
      system: view.system,
      type: view.type,
      discussionId,
      createdAt: view.createdAt,
      updatedAt: view.updatedAt,
    });
  }
  if (copies.length === 0) return [];
  const noteable: NoteableData = { noteable_type: 'Issue', noteable_id: to.id, commit_id: null, project_id: to.projectId, group_id: null };
  return [spec(notes, noteableKey(noteable), { type: 'CopyNotes', noteable, notes: copies }, { newStream: true })];
}
