import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { mergeRequestStreamId } from '../../domain/merge-requests/events.js';
import type { NoteableType, NotePosition, NoteType } from '../../domain/notes/events.js';
import { mergeRequestSystemNotes, SYSTEM_NOTE_EVENT_TYPES, type SystemNote } from '../../domain/notes/system-notes.js';
import { readIssuableHistory } from '../issuable-history.js';
import { findCommits } from '../repository/queries.js';
import type { NoteRow } from './tables.js';

/** The reads the notes routes run: user notes from the table, system notes from the log. */

/** One note as the entities present it, a user's or a system note. */
export interface NoteView {
  readonly id: number;
  readonly type: NoteType | null;
  readonly body: string;
  readonly authorId: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly system: boolean;
  readonly noteableType: NoteableType;
  readonly noteableId: number | null;
  readonly noteableIid: number | null;
  readonly discussionId: string;
  readonly position: NotePosition | null;
  readonly lineCode: string | null;
  readonly resolvable: boolean;
  readonly resolvedById: number | null;
}

/** Where a noteable's notes are: by its id, or a commit by its project and SHA. */
export type NoteableWhere = { readonly type: NoteableType; readonly id: number; readonly iid: number | null } | { readonly type: 'Commit'; readonly projectId: number; readonly sha: string };

const toView = (row: NoteRow, noteableIid: number | null): NoteView => ({
  id: Number(row.id),
  type: row.type,
  body: row.body,
  authorId: row.author_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  system: row.system,
  noteableType: row.noteable_type,
  noteableId: row.noteable_id,
  noteableIid,
  discussionId: row.discussion_id,
  position: row.position,
  lineCode: row.line_code,
  resolvable: row.resolvable,
  resolvedById: row.resolved_by_id,
});

/** The user notes of a noteable, oldest first. */
export async function userNotes(db: Db, where: NoteableWhere): Promise<NoteView[]> {
  let query = db.selectFrom('notes').selectAll();
  query =
    'sha' in where
      ? query.where('noteable_type', '=', 'Commit').where('project_id', '=', where.projectId).where('commit_id', '=', where.sha)
      : query.where('noteable_type', '=', where.type).where('noteable_id', '=', where.id);
  const rows = await query.orderBy('id').execute();
  return rows.map((row) => toView(row, 'sha' in where ? null : where.iid));
}

/** GitLab's discussion id of a system note (each is an individual discussion of its own). */
const systemDiscussionId = (id: number) => createHash('sha1').update(`system-note-${id}`).digest('hex');

/**
 * The system notes of a merge request, from its stream in the log (src/domain/notes/system-notes.ts),
 * with the facts they name looked up in a few queries.
 */
export async function mergeRequestSystemNoteViews(db: Db, mergeRequest: { id: number; iid: number; project_id: number }, projectPath: string): Promise<NoteView[]> {
  const stream = await readIssuableHistory(db, mergeRequestStreamId(mergeRequest.id), SYSTEM_NOTE_EVENT_TYPES);
  const userIds = new Set<number>();
  const milestoneIds = new Set<number>();
  const shas = new Set<string>();
  for (const { event } of stream) {
    if (event.type === 'MergeRequestUpdated') {
      for (const id of [...(event.data.changes.assignee_ids ?? []), ...(event.data.previous.assignee_ids ?? [])]) userIds.add(id);
      if (event.data.changes.milestone_id != null) milestoneIds.add(event.data.changes.milestone_id);
    }
    if (event.type === 'MergeRequestOpened' && event.data.milestone_id !== null) milestoneIds.add(event.data.milestone_id);
    if (event.type === 'MergeRequestVersionRecorded') for (const sha of event.data.version.commit_shas) shas.add(sha);
  }
  const [users, milestones, commits] = await Promise.all([
    userIds.size > 0 ? db.selectFrom('users').select(['id', 'username']).where('id', 'in', [...userIds]).execute() : [],
    milestoneIds.size > 0 ? db.selectFrom('milestones').select(['id', 'iid']).where('id', 'in', [...milestoneIds]).execute() : [],
    findCommits(db, mergeRequest.project_id, [...shas]),
  ]);
  const usernames = new Map(users.map((u) => [u.id, u.username]));
  const milestoneMap = new Map(milestones.map((m) => [m.id, m]));
  const titles = new Map(commits.map((c) => [c.sha, c.message.split('\n', 1)[0] ?? '']));
  const notes = mergeRequestSystemNotes(stream, {
    username: (id) => usernames.get(id) ?? 'ghost',
    // Milestone#to_reference(format: :iid) of a project's milestone (forgelog's milestones are all a project's).
    milestoneReference: (id) => `%${milestoneMap.get(id)?.iid ?? ''}`,
    commitTitle: (sha) => titles.get(sha) ?? '',
    mergeRequestPath: `/${projectPath}/-/merge_requests/${mergeRequest.iid}`,
  });
  return notes.map((n) => systemNoteView(n, 'MergeRequest', mergeRequest));
}

/** A system note as the entities present it: an individual discussion of its own. */
export const systemNoteView = (n: SystemNote, noteableType: NoteableType, noteable: { id: number; iid: number | null }): NoteView => ({
  id: n.id,
  type: null,
  body: n.body,
  authorId: n.authorId,
  createdAt: n.createdAt,
  updatedAt: n.createdAt,
  system: true,
  noteableType,
  noteableId: noteable.id,
  noteableIid: noteable.iid,
  discussionId: systemDiscussionId(n.id),
  position: null,
  lineCode: null,
  resolvable: false,
  resolvedById: null,
});

/** Notes in created order (GitLab's notes of a noteable by id, which follows creation). */
export const inCreatedOrder = (notes: readonly NoteView[]) => [...notes].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id - b.id));

/**
 * The list order of GET …/notes: `order_by` created_at or updated_at, `sort` asc or desc, the id
 * as the tie-breaker in the same direction (order_options_with_tie_breaker).
 */
export function sortNotes(notes: readonly NoteView[], orderBy: 'created_at' | 'updated_at', sort: 'asc' | 'desc'): NoteView[] {
  const key = (n: NoteView) => (orderBy === 'created_at' ? n.createdAt : n.updatedAt);
  const direction = sort === 'asc' ? 1 : -1;
  return [...notes].sort((a, b) => direction * (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id));
}

/** `user_notes_count` of some noteables of a type, as one statement (the merge requests' views read it with theirs). */
export const userNotesCountsQuery = (db: Db, type: NoteableType, ids: readonly number[]) =>
  db
    .selectFrom('note_counts')
    .select(['noteable_id', 'user_notes_count'])
    .where('noteable_type', '=', type)
    .where('noteable_id', '=', sql<number>`any(${[...ids]}::integer[])`)
    .compile();
