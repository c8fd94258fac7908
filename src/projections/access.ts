import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../database/database.js';
import { ACCESS, type Viewer } from '../domain/access.js';
import type { UserRow } from './users.js';

/**
 * The one authorization model: a user's access level on a project or group, as GitLab's
 * project_authorizations and Group#max_member_access_for_user compute it — the HIGHEST level
 * over every way in. Every decision asks it here: the per-resource lookups (kernel/scope.ts),
 * the list filters (min_access_level, membership, visibility), the entity's abilities.
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
 * GitLab's project_authorizations of one user (Gitlab::ProjectAuthorizations, 12.x): one
 * `(project_id, access_level)` row per way in — the direct project membership, a membership
 * of the project's group or of any ancestor, a share of the project with a group the user is
 * a member of (directly or through an ancestor), capped by the share's `group_access`, and
 * the user's personal projects (maintainer in GitLab 12). The level is the highest row.
 */
function projectAuthorizations(viewer: Viewer): RawBuilder<{ project_id: number; access_level: number }> {
  const { id: userId, today } = viewer;
  return sql`(
    select m.source_id as project_id, m.access_level from members m
     where m.source_type = 'Project' and m.user_id = ${userId} and ${unexpired(today, 'm')}
    union all
    select p.id, m.access_level from members m join projects p on p.traversal_ids && array[m.source_id]
     where m.source_type = 'Namespace' and m.user_id = ${userId} and ${unexpired(today, 'm')}
    union all
    select l.project_id, least(l.group_access, m.access_level) from members m
      join namespaces g on g.traversal_ids && array[m.source_id]
      join project_group_links l on l.group_id = g.id and ${unexpired(today, 'l')}
     where m.source_type = 'Namespace' and m.user_id = ${userId} and ${unexpired(today, 'm')}
    union all
    select p.id, ${sql.lit(ACCESS.MAINTAINER)} from namespaces n join projects p on p.namespace_id = n.id
     where n.kind = 'user' and n.owner_id = ${userId})`;
}

/**
 * GitLab's group max_member_access_for_user (12.x: members_with_parents): one
 * `(group_id, access_level)` row per membership of the group or of an ancestor. GitLab 12's
 * group shares (group_group_links) do not exist here.
 */
function groupAuthorizations(viewer: Viewer): RawBuilder<{ group_id: number; access_level: number }> {
  return sql`(
    select d.id as group_id, m.access_level from members m join namespaces d on d.traversal_ids && array[m.source_id]
     where m.source_type = 'Namespace' and m.user_id = ${viewer.id} and ${unexpired(viewer.today, 'm')})`;
}

/** The viewer's access level on the project `projectId` names (a column or a value): null for none. */
export function projectAccessLevel(viewer: Viewer | null, projectId: Expression<number> | number): RawBuilder<number | null> {
  if (!viewer) return sql<number | null>`null::integer`;
  return sql<number | null>`(select max(a.access_level) from ${projectAuthorizations(viewer)} a where a.project_id = ${projectId})`;
}

/** The viewer's access level on the group `groupId` names (a column or a value): null for none. */
export function groupAccessLevel(viewer: Viewer | null, groupId: Expression<number> | number): RawBuilder<number | null> {
  if (!viewer) return sql<number | null>`null::integer`;
  return sql<number | null>`(select max(a.access_level) from ${groupAuthorizations(viewer)} a where a.group_id = ${groupId})`;
}

/** The viewer's level on each of some projects that has one, as `(project_id, access_level)` rows (one pass, for pages). */
export function projectAccessLevels(viewer: Viewer, projectIds: readonly number[]): RawBuilder<{ project_id: number; access_level: number }> {
  return sql`select a.project_id, max(a.access_level) as access_level from ${projectAuthorizations(viewer)} a
     where a.project_id = any(${[...projectIds]}::integer[]) group by a.project_id`;
}

/**
 * Projects (rows of `alias`) on which the viewer's level is `minLevel` or more (GitLab:
 * authorized_projects(min_access_level)). The highest level reaches `minLevel` exactly when
 * one way in does, so this is `projectAccessLevel(…) >= minLevel` as an id set.
 */
export function authorizedProjects(viewer: Viewer, minLevel: number = ACCESS.GUEST, alias = 'projects'): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${alias}.id`)} in (select a.project_id from ${projectAuthorizations(viewer)} a where a.access_level >= ${minLevel})`;
}

/** Groups (rows of `alias`) on which the viewer's level is `minLevel` or more, as an id set. */
export function authorizedGroups(viewer: Viewer, minLevel: number = ACCESS.GUEST, alias = 'namespaces'): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${alias}.id`)} in (select a.group_id from ${groupAuthorizations(viewer)} a where a.access_level >= ${minLevel})`;
}

/** The viewer's level on one project, in one query (for callers that hold no row query to add it to). */
export async function projectAccessLevelOf(db: Db, viewer: Viewer | null, projectId: number): Promise<number | null> {
  if (!viewer) return null;
  const { rows } = await sql<{ level: number | null }>`select ${projectAccessLevel(viewer, projectId)} as level`.execute(db);
  return rows[0]?.level ?? null;
}

/** The viewer's level on one group, in one query. */
export async function groupAccessLevelOf(db: Db, viewer: Viewer | null, groupId: number): Promise<number | null> {
  if (!viewer) return null;
  const { rows } = await sql<{ level: number | null }>`select ${groupAccessLevel(viewer, groupId)} as level`.execute(db);
  return rows[0]?.level ?? null;
}

// ───────────────────────────── Direct memberships (presentation, listings) ─────────────────────────────

/** Namespace ids where the viewer holds an active direct membership. */
export function memberNamespaceIds(viewer: Viewer) {
  return sql<number[]>`array(select source_id from members where user_id = ${viewer.id} and source_type = 'Namespace' and ${unexpired(viewer.today)})`;
}
