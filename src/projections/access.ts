import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../database/database.js';
import { ACCESS, type Viewer } from '../domain/access.js';
import type { ProjectSubject } from '../domain/policy/project.js';
import type { UserRow } from './users.js';

/**
 * The one authorization model: a user's access level on a project or group, as GitLab's
 * project_authorizations and Group#max_member_access_for_user compute it — the HIGHEST level
 * over every way in. The authorizations projection (src/projections/authorizations/) keeps it
 * as rows when memberships, projects, groups and shares change; every decision reads it here,
 * by key or joined on a page's ids: the per-resource lookups (kernel/scope.ts), the list
 * filters (min_access_level, membership, visibility), the entity's abilities.
 * Memberships and shares count until their `expires_at` by the viewer's `today` (the command
 * clock). Administrators are aside: the policy tables in src/domain/policy/ let them through.
 */

/** The viewer of a request, judged on the command clock's date (`today(c)`). */
export const viewerOf = (user: Pick<UserRow, 'id' | 'is_admin' | 'external'> | null | undefined, today: string): Viewer | null =>
  user ? { id: user.id, isAdmin: user.is_admin, external: user.external, today } : null;

/**
 * Rows of `members` or `project_group_links` that have not expired on `today` (GitLab: they
 * end after their `expires_at`); `alias` qualifies the column when the query joins several tables.
 */
export const unexpired = (today: string, alias?: string) => {
  const column = sql.ref(alias ? `${alias}.expires_at` : 'expires_at');
  return sql<SqlBool>`(${column} is null or ${column} >= ${today}::date)`;
};

// ───────────────────────────── The model ─────────────────────────────

/**
 * A viewer's rows of the authorizations projection (src/projections/authorizations/) that
 * have not expired on their `today`, at `minLevel` or more.
 */
const held = (viewer: Viewer, alias: string, minLevel?: number) => {
  const a = (column: string) => sql.ref(`${alias}.${column}`);
  const atLeast = minLevel === undefined ? sql`` : sql` and ${a('access_level')} >= ${minLevel}`;
  return sql<SqlBool>`${a('user_id')} = ${viewer.id} and ${unexpired(viewer.today, alias)}${atLeast}`;
};

/** The viewer's access level on the project `projectId` names (a column or a value): null for none. */
export function projectAccessLevel(viewer: Viewer | null, projectId: Expression<number> | number): RawBuilder<number | null> {
  if (!viewer) return sql<number | null>`null::integer`;
  return sql<number | null>`(select max(pa.access_level) from project_authorizations pa where pa.project_id = ${projectId} and ${held(viewer, 'pa')})`;
}

/** The viewer's access level on the group `groupId` names (a column or a value): null for none. */
export function groupAccessLevel(viewer: Viewer | null, groupId: Expression<number> | number): RawBuilder<number | null> {
  if (!viewer) return sql<number | null>`null::integer`;
  return sql<number | null>`(select max(ga.access_level) from group_authorizations ga where ga.group_id = ${groupId} and ${held(viewer, 'ga')})`;
}

/** The viewer's level on each of some projects that has one, as `(project_id, access_level)` rows (one pass, for pages). */
export function projectAccessLevels(viewer: Viewer, projectIds: readonly number[]): RawBuilder<{ project_id: number; access_level: number }> {
  return sql`select pa.project_id, max(pa.access_level) as access_level from project_authorizations pa
     where pa.project_id = any(${[...projectIds]}::integer[]) and ${held(viewer, 'pa')} group by pa.project_id`;
}

/**
 * Projects (rows of `alias`) on which the viewer's level is `minLevel` or more (GitLab:
 * authorized_projects(min_access_level)). The highest level reaches `minLevel` exactly when
 * one row does, so this is `projectAccessLevel(…) >= minLevel` as a key lookup per row.
 */
export function authorizedProjects(viewer: Viewer, minLevel: number = ACCESS.GUEST, alias = 'projects'): Expression<SqlBool> {
  return sql<SqlBool>`exists (select 1 from project_authorizations pa where pa.project_id = ${sql.ref(`${alias}.id`)} and ${held(viewer, 'pa', minLevel)})`;
}

/** Groups (rows of `alias`) on which the viewer's level is `minLevel` or more. */
export function authorizedGroups(viewer: Viewer, minLevel: number = ACCESS.GUEST, alias = 'namespaces'): Expression<SqlBool> {
  return sql<SqlBool>`exists (select 1 from group_authorizations ga where ga.group_id = ${sql.ref(`${alias}.id`)} and ${held(viewer, 'ga', minLevel)})`;
}

/** Ids of the projects on which the viewer's level is `minLevel` or more. */
export function authorizedProjectIds(viewer: Viewer, minLevel: number = ACCESS.GUEST): RawBuilder<number> {
  return sql<number>`select pa.project_id from project_authorizations pa where ${held(viewer, 'pa', minLevel)}`;
}

/** Ids of the groups on which the viewer has a level: their memberships' groups and every descendant. */
export function authorizedGroupIds(viewer: Viewer): RawBuilder<number> {
  return sql<number>`select ga.group_id from group_authorizations ga where ${held(viewer, 'ga')}`;
}

/** The viewer's level on one project, in one query (for callers that hold no row query to add it to). */
export async function projectAccessLevelOf(db: Db, viewer: Viewer | null, projectId: number): Promise<number | null> {
  if (!viewer) return null;
  const { rows } = await sql<{ level: number | null }>`select ${projectAccessLevel(viewer, projectId)} as level`.execute(db);
  return rows[0]?.level ?? null;
}

/**
 * The policy subjects of some users on one project, blocked users left out, none for a project
 * pending deletion: whom an ability is asked for when the caller is not the user (assignees
 * kept by IssuableBaseService#filter_assignee, todos made by TodoService).
 */
export async function projectSubjectsOf(db: Db, projectId: number, userIds: readonly number[], today: string): Promise<ProjectSubject[]> {
  if (userIds.length === 0) return [];
  const project = await db
    .selectFrom('projects')
    .selectAll()
    .select(sql<number | null>`(select n.owner_id from namespaces n where n.id = projects.namespace_id and n.kind = 'user')`.as('personal_owner_id'))
    .where('id', '=', projectId)
    .where('pending_delete', '=', false)
    .executeTakeFirst();
  if (!project) return [];
  const users = await db.selectFrom('users').select(['id', 'is_admin', 'external', 'state']).where('id', 'in', [...new Set(userIds)]).where('state', '<>', 'blocked').execute();
  const subjects: ProjectSubject[] = [];
  for (const user of users) {
    const viewer = viewerOf(user, today);
    subjects.push({ kind: 'project', viewer, role: await projectAccessLevelOf(db, viewer, projectId), project, personalOwnerId: project.personal_owner_id });
  }
  return subjects;
}

/** The viewer's level on one group, in one query. */
export async function groupAccessLevelOf(db: Db, viewer: Viewer | null, groupId: number): Promise<number | null> {
  if (!viewer) return null;
  const { rows } = await sql<{ level: number | null }>`select ${groupAccessLevel(viewer, groupId)} as level`.execute(db);
  return rows[0]?.level ?? null;
}
