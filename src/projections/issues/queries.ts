import { sql, type SqlBool } from 'kysely';
import { issueStreamId } from '../../domain/issues/events.js';
import type { IssueReference } from '../../domain/issues/references.js';
import type { Db } from '../../database/database.js';
import { readTogether } from '../../database/read-together.js';
import { can } from '../../domain/policy/can.js';
import type { ProjectSubject } from '../../domain/policy/project.js';
import { projectSubjectsOf } from '../access.js';
import type { LabelRow } from '../labels/tables.js';
import type { UserReference } from '../merge-requests/queries.js';
import type { MilestoneRow } from '../milestones/tables.js';
import { votesQuery } from '../award-emoji/queries.js';
import { userNotesCountsQuery } from '../notes/queries.js';
import type { IssueRow } from './tables.js';

/** The reads the issue routes run, and what an entity needs besides the row. */

export const findIssue = (db: Db, projectId: number, iid: number): Promise<IssueRow | undefined> =>
  db.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();

export const findIssueById = (db: Db, id: number): Promise<IssueRow | undefined> => db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();

/** An issue row with what its entity embeds: users, labels, milestone, project path. */
export interface IssueView {
  readonly row: IssueRow;
  readonly pathWithNamespace: string;
  readonly users: ReadonlyMap<number, UserReference>;
  /** The issue's labels (deleted ones are gone), by title as GitLab sorts them. */
  readonly labels: readonly LabelRow[];
  readonly milestone: MilestoneRow | null;
  /** From the notes and award emoji areas (`note_counts`, the thumbsup / thumbsdown awards). */
  readonly userNotesCount: number;
  readonly upvotes: number;
  readonly downvotes: number;
}

/** The views of a page of rows, in at most six queries sent together, in the rows' order. */
export async function issueViews(db: Db, rows: readonly IssueRow[], knownPaths: ReadonlyMap<number, string> = new Map()): Promise<IssueView[]> {
  if (rows.length === 0) return [];
  const userIds = new Set<number>();
  const labelIds = new Set<number>();
  const milestoneIds = new Set<number>();
  const projectIds = new Set<number>();
  for (const row of rows) {
    userIds.add(row.author_id);
    for (const id of row.assignee_ids) userIds.add(id);
    if (row.closed_by_id !== null) userIds.add(row.closed_by_id);
    for (const id of row.label_ids) labelIds.add(id);
    if (row.milestone_id !== null) milestoneIds.add(row.milestone_id);
    if (!knownPaths.has(row.project_id)) projectIds.add(row.project_id);
  }
  const byIds = (ids: ReadonlySet<number>) => sql<number>`any(${[...ids]}::integer[])`;
  const ids = rows.map((row) => row.id);
  const [users, labels, milestones, projects, noteCounts, votes] = await readTogether(db, [
    db.selectFrom('users').select(['id', 'name', 'username', 'state', 'avatar_url', 'email']).where('id', '=', byIds(userIds)).compile(),
    labelIds.size > 0 ? db.selectFrom('labels').selectAll().where('id', '=', byIds(labelIds)).compile() : null,
    milestoneIds.size > 0 ? db.selectFrom('milestones').selectAll().where('id', '=', byIds(milestoneIds)).compile() : null,
    projectIds.size > 0 ? db.selectFrom('projects').select(['id', 'path_with_namespace']).where('id', '=', byIds(projectIds)).compile() : null,
    userNotesCountsQuery(db, 'Issue', ids),
    votesQuery(db, 'Issue', ids),
  ]);
  const noteCountMap = new Map(noteCounts.map((n) => [n.noteable_id, n.user_notes_count]));
  const voteMap = new Map(votes.map((v) => [Number(v.awardable_id), v]));
  const userMap = new Map(users.map((u) => [u.id, u]));
  const labelMap = new Map(labels.map((l) => [l.id, l]));
  const milestoneMap = new Map(milestones.map((m) => [m.id, m]));
  const pathMap = new Map([...knownPaths, ...projects.map((p): [number, string] => [p.id, p.path_with_namespace])]);
  return rows.map((row) => ({
    row,
    pathWithNamespace: pathMap.get(row.project_id) ?? '',
    users: userMap,
    labels: row.label_ids
      .map((id) => labelMap.get(id))
      .filter((l): l is LabelRow => l !== undefined)
      .sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0)),
    milestone: row.milestone_id === null ? null : (milestoneMap.get(row.milestone_id) ?? null),
    userNotesCount: noteCountMap.get(row.id) ?? 0,
    upvotes: Number(voteMap.get(row.id)?.upvotes ?? 0),
    downvotes: Number(voteMap.get(row.id)?.downvotes ?? 0),
  }));
}

/** Subscribable#subscribed? for one user over one issue: an explicit subscription, else participation (author, assignees). */
export async function isSubscribedTo(db: Db, row: IssueRow, userId: number | null): Promise<boolean> {
  if (userId === null) return false;
  const explicit = await db.selectFrom('issue_subscriptions').select('subscribed').where('issue_id', '=', row.id).where('user_id', '=', userId).executeTakeFirst();
  return explicit?.subscribed ?? (row.author_id === userId || row.assignee_ids.includes(userId));
}

/**
 * IssuePolicy on one issue for a subject of its project: the project's ability, the author's
 * and assignees' own (IssuablePolicy's assignee_or_author: read, update, reopen), and a
 * confidential issue hidden from whoever is neither its author, an assignee, nor a reporter
 * (read_confidential_issues; administrators too).
 */
export function canOnIssue(subject: ProjectSubject, row: Pick<IssueRow, 'author_id' | 'assignee_ids' | 'confidential'>, ability: 'read_issue' | 'update_issue' | 'admin_issue' | 'destroy_issue'): boolean {
  const userId = subject.viewer?.id;
  const own = userId !== undefined && (row.author_id === userId || row.assignee_ids.includes(userId));
  if (row.confidential && !own && !can(subject, 'read_confidential_issues')) return false;
  if (can(subject, ability)) return true;
  if (!own || !can(subject, 'read_issue')) return false;
  return ability === 'read_issue' || (ability === 'update_issue' && !subject.project.archived);
}

/** The users among `userIds` who may read the issue (or, with no issue, the project's issues): whom assignments keep and todos go to. */
export async function issueReaders(db: Db, projectId: number, userIds: readonly number[], today: string, issue?: Pick<IssueRow, 'author_id' | 'assignee_ids' | 'confidential'>): Promise<Set<number>> {
  const subjects = await projectSubjectsOf(db, projectId, userIds, today);
  return new Set(subjects.filter((s) => (issue ? canOnIssue(s, issue, 'read_issue') : can(s, 'read_issue'))).map((s) => s.viewer!.id));
}

/**
 * The issues some references name, seen from a project (its path with namespace): `#1` its
 * own, `project#1` a project of its namespace, `group/project#1` by full path. Once each,
 * in the references' order; references to nothing are left out.
 */
export async function referencedIssues(db: Db, from: { id: number; path_with_namespace: string }, refs: readonly IssueReference[]): Promise<IssueRow[]> {
  const namespace = from.path_with_namespace.slice(0, from.path_with_namespace.lastIndexOf('/'));
  const paths = [...new Set(refs.flatMap((r) => (r.path === null ? [] : [(r.path.includes('/') ? r.path : `${namespace}/${r.path}`).toLowerCase()])))];
  const projects = paths.length === 0 ? [] : await db.selectFrom('projects').select(['id', 'path_with_namespace']).where(sql<SqlBool>`lower(path_with_namespace) = any(${paths}::text[])`).where('pending_delete', '=', false).execute();
  const projectOf = new Map(projects.map((p) => [p.path_with_namespace.toLowerCase(), p.id]));
  const wanted = refs.flatMap((r) => {
    const projectId = r.path === null ? from.id : projectOf.get((r.path.includes('/') ? r.path : `${namespace}/${r.path}`).toLowerCase());
    return projectId === undefined ? [] : [{ projectId, iid: r.iid }];
  });
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('issues')
    .selectAll()
    .where((eb) => eb.or(wanted.map((w) => eb.and([eb('project_id', '=', w.projectId), eb('iid', '=', w.iid)]))))
    .execute();
  const byKey = new Map(rows.map((r) => [`${r.project_id}#${r.iid}`, r]));
  const seen = new Set<number>();
  return wanted.flatMap((w) => {
    const row = byKey.get(`${w.projectId}#${w.iid}`);
    if (!row || seen.has(row.id)) return [];
    seen.add(row.id);
    return [row];
  });
}

/** The user agent and IP of the request that created the issue (UserAgentDetail), from its creation event's metadata. */
export async function creationRequestOf(db: Db, issueId: number): Promise<{ userAgent: string; ip: string } | undefined> {
  const event = await db.selectFrom('events').select('metadata').where('stream_id', '=', issueStreamId(issueId)).where('stream_version', '=', 1).executeTakeFirst();
  const { user_agent: userAgent, ip } = event?.metadata ?? {};
  // UserAgentDetail validates both present: a request without them recorded none.
  return userAgent && ip ? { userAgent, ip } : undefined;
}
