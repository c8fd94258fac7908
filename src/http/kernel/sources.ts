import type { Context } from 'hono';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Viewer } from '../../domain/access.js';
import { canRead } from '../../domain/access.js';
import { groupAccessLevel, projectAccessLevel, viewerOf } from '../../projections/access.js';
import { groupHasProjectVisibleTo } from '../../projections/groups/queries.js';
import type { NamespaceRow } from '../../projections/groups/tables.js';
import type { ProjectRow } from '../../projections/projects.js';
import type { Auth } from './auth.js';
import { appContext, today } from './context.js';
import { notFound } from '../../domain/errors.js';

/**
 * A group or project as the caller sees it: the row, the caller's access level on it (the one
 * model, src/projections/access.ts; null for none) and the viewer.
 */
export interface Visible<Row> {
  readonly row: Row;
  readonly role: number | null;
  readonly viewer: Viewer | null;
}

const INT4_MAX = 2147483647;

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
 * `:id` of the groups endpoints: a numeric id or a URL-encoded full path. A group the
 * caller may not see is 404 `{"message":"404 Group Not Found"}`, never 403.
 */
export async function findVisibleGroup(c: Context, auth: Auth, id: string): Promise<Visible<NamespaceRow>> {
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
  // GitLab's GroupPolicy has_projects: a project the viewer may see inside the group makes it readable.
  if (!canRead(viewer, row.visibility, role) && !(await groupHasProjectVisibleTo(db, viewer, row.id))) throw notFound('Group');
  return { row, role, viewer };
}

/** `:id` of the projects endpoints: numeric id or URL-encoded `namespace/path`; 404 when not visible. */
export async function findVisibleProject(c: Context, auth: Auth, id: string): Promise<Visible<ProjectRow>> {
  const { db } = appContext(c);
  const viewer = viewerOf(auth.user, today(c));
  // The row and the caller's level in one query.
  const found = await db
    .selectFrom('projects')
    .selectAll()
    .select(projectAccessLevel(viewer, sql.ref('projects.id')).as('access_level'))
    .where('pending_delete', '=', false)
    .where(idOrPath(id, 'path_with_namespace', 'Project'))
    .executeTakeFirst();
  if (!found) throw notFound('Project');
  const { access_level: role, ...row } = found;
  if (!canRead(viewer, row.visibility, role)) throw notFound('Project');
  return { row, role, viewer };
}
