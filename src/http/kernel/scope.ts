import type { Context } from 'hono';
import type { Db } from '../../database/database.js';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Viewer } from '../../domain/access.js';
import { forbidden, notFound } from '../../domain/errors.js';
import { can } from '../../domain/policy/can.js';
import type { GroupAbility, GroupSubject } from '../../domain/policy/group.js';
import type { ProjectAbility, ProjectSubject } from '../../domain/policy/project.js';
import { groupAccessLevel, projectAccessLevel, viewerOf } from '../../projections/access.js';
import { groupHasProjectVisibleTo } from '../../projections/groups/queries.js';
import type { NamespaceRow } from '../../projections/groups/tables.js';
import type { ProjectRow } from '../../projections/projects/tables.js';
import { appContext, today, type Auth } from './context.js';
import { INT4_MAX, pathId } from './params.js';

/**
 * The group or project a route acts on, as GitLab's `user_group` / `user_project` +
 * `authorize!` find it: `:id` resolved, 404 when the caller may not read it, 403 when the
 * ability the route asks is missing. Routes ask further abilities with `scope.can(…)`.
 */

/** A group or project as the caller sees it: the row, the caller's level on it (the one model; null for none) and the viewer. */
export interface Visible<Row> {
  readonly row: Row;
  readonly role: number | null;
  readonly viewer: Viewer | null;
}

export interface ProjectScope extends Visible<ProjectRow> {
  readonly subject: ProjectSubject;
  can(ability: ProjectAbility): boolean;
}

export interface GroupScope extends Visible<NamespaceRow> {
  readonly subject: GroupSubject;
  can(ability: GroupAbility): boolean;
}

/**
 * `:id` as GitLab reads it: all digits is an id, anything else a URL-encoded full path,
 * matched case-insensitively. An id past PostgreSQL's integer names nothing.
 */
function idOrPath(id: string, pathColumn: 'full_path' | 'path_with_namespace', subject: string): Expression<SqlBool> {
  if (!/^\d+$/.test(id)) return sql<SqlBool>`lower(${sql.ref(pathColumn)}) = ${id.toLowerCase()}`;
  if (Number(id) > INT4_MAX) throw notFound(subject);
  return sql<SqlBool>`id = ${Number(id)}`;
}

/**
 * GitLab's `user_project` (or `find_project!(id)`) and `authorize! ability`: the project `:id`
 * names, 404 `{"message":"404 Project Not Found"}` when the caller may not read it, then 403
 * without `ability`.
 */
export async function userProject(c: Context, auth: Auth, ability?: ProjectAbility, id = c.req.param('id') ?? ''): Promise<ProjectScope> {
  const { db } = appContext(c);
  const viewer = viewerOf(auth.user, today(c));
  // The row, the caller's level and a personal namespace's owner in one query.
  const found = await db
    .selectFrom('projects')
    .selectAll()
    .select(projectAccessLevel(viewer, sql.ref('projects.id')).as('access_level'))
    .select(sql<number | null>`(select n.owner_id from namespaces n where n.id = projects.namespace_id and n.kind = 'user')`.as('personal_owner_id'))
    .where('pending_delete', '=', false)
    .where(idOrPath(id, 'path_with_namespace', 'Project'))
    .executeTakeFirst();
  if (!found) throw notFound('Project');
  const { access_level: role, personal_owner_id: personalOwnerId, ...row } = found;
  const subject: ProjectSubject = { kind: 'project', viewer, role, project: row, personalOwnerId };
  if (!can(subject, 'read_project')) throw notFound('Project');
  if (ability && !can(subject, ability)) throw forbidden();
  return { row, role, viewer, subject, can: (asked) => can(subject, asked) };
}

/**
 * GitLab's `user_group` (or `find_group!(id)`) and `authorize! ability`: the group `:id`
 * names, 404 `{"message":"404 Group Not Found"}` when the caller may not read it (never 403),
 * then 403 without `ability`.
 */
export async function userGroup(c: Context, auth: Auth, ability?: GroupAbility, id = c.req.param('id') ?? ''): Promise<GroupScope> {
  const { db } = appContext(c);
  const viewer = viewerOf(auth.user, today(c));
  // The row and the caller's level in one query.
  const found = await db
    .selectFrom('namespaces')
    .selectAll()
    .select(groupAccessLevel(viewer, sql.ref('namespaces.id')).as('access_level'))
    .where('kind', '=', 'group')
    .where('pending_delete', '=', false)
    .where(idOrPath(id, 'full_path', 'Group'))
    .executeTakeFirst();
  if (!found) throw notFound('Group');
  const { access_level: role, ...row } = found;
  const withoutProjects: GroupSubject = { kind: 'group', viewer, role, group: row };
  // GitLab's has_projects, the one condition that needs a query: looked up only when the others fail.
  const subject = can(withoutProjects, 'read_group') ? withoutProjects : { ...withoutProjects, hasProjects: await groupHasProjectVisibleTo(db, viewer, row.id) };
  if (!can(subject, 'read_group')) throw notFound('Group');
  if (ability && !can(subject, ability)) throw forbidden();
  return { row, role, viewer, subject, can: (asked) => can(subject, asked) };
}

/**
 * `scope.things.find(params[:thing_id])`: the row the path integer `param` names (read by
 * `find` within the scope the caller already holds), or the route's 404 — also for an id no
 * row can have.
 */
export function pathRow<R>(c: Context, param: string, find: (db: Db, id: number) => Promise<R | undefined>, notFound: () => Error): Promise<R> {
  return found(c, pathId(c, param), find, notFound);
}

/** `scope.things.find_by!(name: params[:name])`: the row the path segment `param` names as it is, or the route's 404. */
export function pathNamed<R>(c: Context, param: string, find: (db: Db, name: string) => Promise<R | undefined>, notFound: (name: string) => Error): Promise<R> {
  const name = c.req.param(param) ?? '';
  return found(c, name, find, () => notFound(name));
}

async function found<K, R>(c: Context, key: K | null, find: (db: Db, key: K) => Promise<R | undefined>, notFound: () => Error): Promise<R> {
  const row = key === null ? undefined : await find(appContext(c).db, key);
  if (row === undefined) throw notFound();
  return row;
}
