import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { crossReferenceBody, epicNoteBody, mentionedReferences, type MentionedReference, type MentionedType, type MentionerRef } from '../../domain/notes/cross-references.js';
import { SYSTEM_NOTE_ID_FACTOR } from '../../domain/notes/system-notes.js';
import { can } from '../../domain/policy/can.js';
import type { ProjectSubject } from '../../domain/policy/project.js';
import { projectSubjectsOf } from '../access.js';
import { canOnIssue, inReferencedProjects, viewerSubjectsOn } from '../issues/queries.js';
import type { IssueRow } from '../issues/tables.js';
import { systemNoteView, type NoteView } from '../notes/queries.js';
import { findCommits } from '../repository/queries.js';
import { usersByEmail } from '../users/queries.js';

/** An issue or a merge request a text references. */
export interface MentionedTarget {
  readonly type: MentionedType;
  readonly id: number;
  readonly projectId: number;
}

/**
 * The issues and merge requests that references written in a project name (by the project
 * paths and iids they give), in the order of the references, once each.
 */
export async function referencedTargets(db: Db, fromProjectId: number, refs: readonly MentionedReference[]): Promise<MentionedTarget[]> {
  if (refs.length === 0) return [];
  const from = await db.selectFrom('projects').select(['id', 'path_with_namespace']).where('id', '=', fromProjectId).executeTakeFirst();
  if (!from) return [];
  const wanted = await inReferencedProjects(db, from, refs);
  const rowsOf = async (table: 'issues' | 'merge_requests', type: MentionedType) => {
    const of = wanted.filter((w) => w.type === type);
    if (of.length === 0) return [];
    return db
      .selectFrom(table)
      .select(['id', 'project_id', 'iid'])
      .where((eb) => eb.or(of.map((w) => eb.and([eb('project_id', '=', w.projectId), eb('iid', '=', w.iid)]))))
      .execute();
  };
  const [issues, mergeRequests] = await Promise.all([rowsOf('issues', 'Issue'), rowsOf('merge_requests', 'MergeRequest')]);
  const byKey = new Map<string, MentionedTarget>([
    ...issues.map((r): [string, MentionedTarget] => [`Issue ${r.project_id} ${r.iid}`, { type: 'Issue', id: r.id, projectId: r.project_id }]),
    ...mergeRequests.map((r): [string, MentionedTarget] => [`MergeRequest ${r.project_id} ${r.iid}`, { type: 'MergeRequest', id: r.id, projectId: r.project_id }]),
  ]);
  const seen = new Set<string>();
  return wanted.flatMap((w) => {
    const target = byKey.get(`${w.type} ${w.projectId} ${w.iid}`);
    if (!target || seen.has(`${target.type} ${target.id}`)) return [];
    seen.add(`${target.type} ${target.id}`);
    return [target];
  });
}

/**
 * Issues::ReferencedMergeRequestsService#referenced_merge_requests (GitLab 12.10's
 * `related_merge_requests`), before the reader's filter: the merge requests the issue's title and
 * description and its notes reference — its user notes, and its "mentioned in merge request …"
 * notes, that is the merge requests that mention it.
 */
export async function referencedMergeRequestIds(db: Db, issue: Pick<IssueRow, 'id' | 'project_id' | 'title' | 'description'>): Promise<number[]> {
  const [mentioning, notes] = await Promise.all([
    db.selectFrom('cross_references').select('mentioner_id').where('target_type', '=', 'Issue').where('target_id', '=', issue.id).where('mentioner_type', '=', 'MergeRequest').where('action', '=', 'cross_reference').execute(),
    db.selectFrom('notes').select('body').where('noteable_type', '=', 'Issue').where('noteable_id', '=', issue.id).execute(),
  ]);
  const referenced = await referencedTargets(db, issue.project_id, mentionedReferences(issue.title, issue.description, ...notes.map((n) => n.body)));
  return [...new Set([...mentioning.map((m) => m.mentioner_id!), ...referenced.filter((t) => t.type === 'MergeRequest').map((t) => t.id)])];
}

/** The noteable whose "mentioned in …" notes are read: an issue (its row: who may read it) or a merge request. */
export type MentionedNoteable = { readonly type: 'Issue'; readonly row: IssueRow } | { readonly type: 'MergeRequest'; readonly row: { id: number; iid: number; project_id: number } };

/** Whether a subject may read an issue or a merge request of its project. */
const mayRead = (subject: ProjectSubject | undefined, type: MentionedType, row: Pick<IssueRow, 'author_id' | 'assignee_ids' | 'confidential'> | null) =>
  subject !== undefined && (type === 'Issue' ? row !== null && canOnIssue(subject, row, 'read_issue') : can(subject, 'read_merge_request'));

/**
 * The "mentioned in …" system notes of an issue or a merge request that `viewer` may see, oldest
 * first. The note of a mention is its source event's: the id 10·p + k (p its position, k its
 * ordinal: src/domain/notes/system-notes.ts), its time and its actor (a pushed commit's author
 * as the push recorded it, else the pusher; pushedCommitAuthors for older events). As GitLab writes one note
 * per mentioner (SystemNoteService.cross_reference_exists?) and only for a mention by someone
 * who could read the noteable (ReferenceExtractor with the author), the note of a mentioner is
 * its first mention by such an author — decided with the authors' access now. It shows to a
 * viewer who may read the mentioner (Note#cross_reference_not_visible_for?): a mentioner since
 * deleted shows to nobody. EE's notes of an issue link ("marked this issue as related to #1")
 * are each link event's, shown to who may read the other issue.
 */
export async function crossReferenceNoteViews(db: Db, noteable: MentionedNoteable, viewer: Viewer | null, today: string): Promise<NoteView[]> {
  const rows = await db
    .selectFrom('cross_references')
    .innerJoin('events', 'events.event_id', 'cross_references.event_id')
    .select(['cross_references.action', 'cross_references.mentioner_type', 'cross_references.mentioner_id', 'cross_references.mentioner_sha', 'cross_references.mentioner_project_id', 'cross_references.ordinal'])
    .select(['cross_references.author_id', 'cross_references.author_recorded'])
    .select(['events.global_position', 'events.actor_id', 'events.occurred_at', 'events.event_type'])
    .where('cross_references.target_type', '=', noteable.type)
    .where('cross_references.target_id', '=', noteable.row.id)
    .orderBy('events.global_position')
    .orderBy('cross_references.ordinal')
    .execute();
  if (rows.length === 0) return [];
  const unrecorded = rows.filter((r) => PUSHES.has(r.event_type) && !r.author_recorded && r.mentioner_sha !== null);
  const pushAuthors = await pushedCommitAuthors(db, unrecorded);
  for (const row of rows) {
    if (row.author_recorded) row.actor_id = row.author_id ?? row.actor_id;
    else if (PUSHES.has(row.event_type)) row.actor_id = pushAuthors.get(`${row.mentioner_project_id}@${row.mentioner_sha}`) ?? row.actor_id;
  }
  const idsOf = (type: 'Issue' | 'MergeRequest') => [...new Set(rows.filter((r) => r.mentioner_type === type).map((r) => r.mentioner_id!))];
  const issueIds = idsOf('Issue');
  const mergeRequestIds = idsOf('MergeRequest');
  const projectIds = [...new Set([noteable.row.project_id, ...rows.map((r) => r.mentioner_project_id)])];
  const authorIds = [...new Set(rows.flatMap((r) => (r.actor_id === null ? [] : [r.actor_id])))];
  const [issues, mergeRequests, projects, readerSubjects, authorSubjects] = await Promise.all([
    issueIds.length > 0 ? db.selectFrom('issues').select(['id', 'iid', 'project_id', 'author_id', 'assignee_ids', 'confidential']).where('id', 'in', issueIds).execute() : [],
    mergeRequestIds.length > 0 ? db.selectFrom('merge_requests').select(['id', 'iid', 'project_id']).where('id', 'in', mergeRequestIds).execute() : [],
    db.selectFrom('projects').select(['id', 'path_with_namespace']).where('id', 'in', projectIds).where('pending_delete', '=', false).execute(),
    viewerSubjectsOn(db, viewer, projectIds),
    projectSubjectsOf(db, noteable.row.project_id, authorIds, today),
  ]);
  const issueMap = new Map(issues.map((i) => [i.id, i]));
  const mergeRequestMap = new Map(mergeRequests.map((m) => [m.id, m]));
  const pathOf = new Map(projects.map((p) => [p.id, p.path_with_namespace]));
  const authors = new Map(authorSubjects.map((s) => [s.viewer!.id, s]));
  const targetPath = pathOf.get(noteable.row.project_id);
  if (targetPath === undefined) return [];
  const targetRow = noteable.type === 'Issue' ? noteable.row : null;

  const written = new Set<string>();
  const notes: NoteView[] = [];
  for (const row of rows) {
    if (row.actor_id === null) continue;
    if (row.action === 'cross_reference') {
      const key = `${row.mentioner_type} ${row.mentioner_id ?? `${row.mentioner_project_id}@${row.mentioner_sha}`}`;
      if (written.has(key) || !mayRead(authors.get(row.actor_id), noteable.type, targetRow)) continue;
      written.add(key);
    }
    const mentioner = mentionerOf(row, issueMap, mergeRequestMap, pathOf);
    const reader = readerSubjects.get(row.mentioner_project_id);
    if (!mentioner || !reader) continue;
    const visible =
      mentioner.ref.type === 'Commit' ? can(reader, 'download_code') : mayRead(reader, mentioner.ref.type, mentioner.ref.type === 'Issue' ? issueMap.get(row.mentioner_id!)! : null);
    if (!visible) continue;
    const at = row.occurred_at.toISOString();
    const id = Number(row.global_position) * SYSTEM_NOTE_ID_FACTOR + row.ordinal;
    notes.push(systemNoteView({ id, position: String(row.global_position), createdAt: at, authorId: row.actor_id, body: crossReferenceBody(mentioner.ref, targetPath, row.action) }, noteable.type, noteable.row));
  }
  return notes;
}

const PUSHES = new Set(['BranchCreated', 'BranchUpdated']);

/**
 * ProcessCommitWorker's `commit.author || user` for the pushes of events that did not record it
 * (before schema version 4 of the branch events; the newer record it: `author_recorded`): a
 * pushed commit mentions as its author, the user whose email is the commit's author email
 * (Commit#author, User.find_by_any_email; forgelog has no secondary emails), else as the
 * pusher (the event's actor). Resolved when read, with the users' emails now (GitLab resolves
 * at push time), so a rebuild can never disagree with it.
 */
async function pushedCommitAuthors(db: Db, rows: readonly { mentioner_project_id: number; mentioner_sha: string | null }[]): Promise<Map<string, number>> {
  const projectIds = [...new Set(rows.map((r) => r.mentioner_project_id))];
  const shasOf = (projectId: number) => rows.filter((r) => r.mentioner_project_id === projectId).map((r) => r.mentioner_sha!);
  const commits = (await Promise.all(projectIds.map(async (projectId) => (await findCommits(db, projectId, shasOf(projectId))).map((c) => ({ key: `${projectId}@${c.sha}`, email: c.author.email.toLowerCase() }))))).flat();
  const users = await usersByEmail(db, commits.map((c) => c.email));
  return new Map(commits.flatMap((c) => (users.has(c.email) ? [[c.key, users.get(c.email)!.id] as const] : [])));
}

function mentionerOf(
  row: { mentioner_type: string; mentioner_id: number | null; mentioner_sha: string | null; mentioner_project_id: number },
  issues: ReadonlyMap<number, { iid: number }>,
  mergeRequests: ReadonlyMap<number, { iid: number }>,
  pathOf: ReadonlyMap<number, string>,
): { ref: MentionerRef } | null {
  const projectPath = pathOf.get(row.mentioner_project_id);
  if (projectPath === undefined) return null;
  if (row.mentioner_type === 'Commit') return row.mentioner_sha === null ? null : { ref: { type: 'Commit', projectPath, sha: row.mentioner_sha } };
  const found = (row.mentioner_type === 'Issue' ? issues : mergeRequests).get(row.mentioner_id!);
  return found ? { ref: { type: row.mentioner_type as 'Issue' | 'MergeRequest', projectPath, iid: found.iid } } : null;
}

/**
 * EE's notes of an epic about its issues ("added issue project#1", moved from or to another
 * epic, "removed issue …"), from the issues' events, oldest first; each shown to who may read
 * the issue (they are cross-reference notes: SystemNoteMetadata's types with references).
 */
export async function epicSystemNoteViews(db: Db, epic: { id: number; iid: number; group_id: number }, viewer: Viewer | null): Promise<NoteView[]> {
  const rows = await db
    .selectFrom('cross_references')
    .innerJoin('events', 'events.event_id', 'cross_references.event_id')
    .select(['cross_references.action', 'cross_references.mentioner_id', 'cross_references.mentioner_project_id', 'cross_references.other_epic_id', 'cross_references.ordinal'])
    .select(['events.global_position', 'events.actor_id', 'events.occurred_at'])
    .where('cross_references.target_type', '=', 'Epic')
    .where('cross_references.target_id', '=', epic.id)
    .orderBy('events.global_position')
    .orderBy('cross_references.ordinal')
    .execute();
  if (rows.length === 0) return [];
  const issueIds = [...new Set(rows.map((r) => r.mentioner_id!))];
  const projectIds = [...new Set(rows.map((r) => r.mentioner_project_id))];
  const epicIds = [...new Set([epic.id, ...rows.flatMap((r) => (r.other_epic_id === null ? [] : [r.other_epic_id]))])];
  const [issues, projects, epics, readers] = await Promise.all([
    db.selectFrom('issues').select(['id', 'iid', 'project_id', 'author_id', 'assignee_ids', 'confidential']).where('id', 'in', issueIds).execute(),
    db.selectFrom('projects').select(['id', 'path_with_namespace', 'namespace_id']).where('id', 'in', projectIds).where('pending_delete', '=', false).execute(),
    db.selectFrom('epics').innerJoin('namespaces', 'namespaces.id', 'epics.group_id').select(['epics.id', 'epics.iid', 'epics.group_id', 'namespaces.full_path']).where('epics.id', 'in', epicIds).execute(),
    viewerSubjectsOn(db, viewer, projectIds),
  ]);
  const issueMap = new Map(issues.map((i) => [i.id, i]));
  const projectMap = new Map(projects.map((p) => [p.id, p]));
  const epicMap = new Map(epics.map((e) => [e.id, e]));
  const group = epicMap.get(epic.id);
  if (!group) return [];
  const notes: NoteView[] = [];
  for (const row of rows) {
    const issue = issueMap.get(row.mentioner_id!);
    const project = projectMap.get(row.mentioner_project_id);
    const other = row.other_epic_id === null ? null : epicMap.get(row.other_epic_id);
    if (row.actor_id === null || !issue || !project || other === undefined || !mayRead(readers.get(project.id), 'Issue', issue)) continue;
    const body = epicNoteBody(
      row.action,
      { projectPath: project.path_with_namespace, namespaceId: project.namespace_id, iid: issue.iid },
      { id: group.group_id, fullPath: group.full_path },
      other && { groupId: other.group_id, fullPath: other.full_path, iid: other.iid },
    );
    if (body === null) continue;
    const at = row.occurred_at.toISOString();
    notes.push(systemNoteView({ id: Number(row.global_position) * SYSTEM_NOTE_ID_FACTOR + row.ordinal, position: String(row.global_position), createdAt: at, authorId: row.actor_id, body }, 'Epic', { id: epic.id, iid: null }));
  }
  return notes;
}
