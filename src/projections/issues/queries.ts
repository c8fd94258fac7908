import { sql, type SqlBool } from 'kysely';
import { issueStreamId } from '../../domain/issues/events.js';
import { referencedPath, type IssueReference } from '../../domain/issues/references.js';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { can } from '../../domain/policy/can.js';
import type { ProjectSubject } from '../../domain/policy/project.js';
import { projectAccessLevel, projectSubjectsOf } from '../access.js';
import { issuableViews, type IssuableView } from '../issuable-views.js';
import type { IssueRow } from './tables.js';

/** The reads the issue routes run, and what an entity needs besides the row. */

export const findIssue = (db: Db, projectId: number, iid: number): Promise<IssueRow | undefined> =>
  db.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();

export const findIssueById = (db: Db, id: number): Promise<IssueRow | undefined> => db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();

/** An issue row with what its entity embeds (src/projections/issuable-views.ts). */
export type IssueView = IssuableView<IssueRow>;

/** The views of a page of issues, in one round trip. */
export const issueViews = (db: Db, rows: readonly IssueRow[], knownPaths?: ReadonlyMap<number, string>): Promise<IssueView[]> => issuableViews(db, 'Issue', rows, knownPaths);

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

/** One viewer's policy subjects on some projects, in one query; projects pending deletion have none. */
export async function viewerSubjectsOn(db: Db, viewer: Viewer | null, projectIds: readonly number[]): Promise<Map<number, ProjectSubject>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('projects')
    .selectAll()
    .select(projectAccessLevel(viewer, sql.ref('projects.id')).as('access_level'))
    .select(sql<number | null>`(select n.owner_id from namespaces n where n.id = projects.namespace_id and n.kind = 'user')`.as('personal_owner_id'))
    .where('id', 'in', [...new Set(projectIds)])
    .where('pending_delete', '=', false)
    .execute();
  return new Map(rows.map(({ access_level: role, personal_owner_id: personalOwnerId, ...project }) => [project.id, { kind: 'project' as const, viewer, role, project, personalOwnerId }]));
}

/** The users among `userIds` who may read the issue (or, with no issue, the project's issues): whom assignments keep and todos go to. */
export async function issueReaders(db: Db, projectId: number, userIds: readonly number[], today: string, issue?: Pick<IssueRow, 'author_id' | 'assignee_ids' | 'confidential'>): Promise<Set<number>> {
  const subjects = await projectSubjectsOf(db, projectId, userIds, today);
  return new Set(subjects.filter((s) => (issue ? canOnIssue(s, issue, 'read_issue') : can(s, 'read_issue'))).map((s) => s.viewer!.id));
}

/**
 * References with the project each names (`project#1`, `group/project!2`, or none: the project
 * written in), paths matched case-insensitively in one statement; a reference to a project
 * that is not there (or is being deleted) is left out.
 */
export async function inReferencedProjects<R extends IssueReference>(db: Db, from: { id: number; path_with_namespace: string }, refs: readonly R[]): Promise<(R & { projectId: number })[]> {
  const paths = [...new Set(refs.flatMap((r) => referencedPath(r, from.path_with_namespace) ?? []))];
  const projects = paths.length === 0 ? [] : await db.selectFrom('projects').select(['id', 'path_with_namespace']).where(sql<SqlBool>`lower(path_with_namespace) = any(${paths}::text[])`).where('pending_delete', '=', false).execute();
  const projectOf = new Map(projects.map((p) => [p.path_with_namespace.toLowerCase(), p.id]));
  return refs.flatMap((r) => {
    const path = referencedPath(r, from.path_with_namespace);
    const projectId = path === null ? from.id : projectOf.get(path);
    return projectId === undefined ? [] : [{ ...r, projectId }];
  });
}

/**
 * The issues some references name, seen from a project (its path with namespace): `#1` its
 * own, `project#1` a project of its namespace, `group/project#1` by full path. Once each,
 * in the references' order; references to nothing are left out.
 */
export async function referencedIssues(db: Db, from: { id: number; path_with_namespace: string }, refs: readonly IssueReference[]): Promise<IssueRow[]> {
  const wanted = await inReferencedProjects(db, from, refs);
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
