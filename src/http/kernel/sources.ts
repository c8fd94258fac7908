import type { Context } from 'hono';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Viewer } from '../../domain/access.js';
import { canRead } from '../../domain/access.js';
import { namespaceRole, projectRole, viewerOf } from '../../projections/access.js';
import { groupHasProjectVisibleTo, type NamespaceRow } from '../../projections/namespaces.js';
import type { ProjectRow } from '../../projections/projects.js';
import type { Auth } from './auth.js';
import { appContext } from './context.js';
import { notFound } from '../../domain/errors.js';

/** A group or project as the caller sees it: the row, the caller's effective role and viewer. */
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
  const row = await db
    .selectFrom('namespaces')
    .selectAll()
    .where('kind', '=', 'group')
    .where('pending_delete', '=', false)
    .where(idOrPath(id, 'full_path', 'Group'))
    .executeTakeFirst();
  if (!row) throw notFound('Group');
  const viewer = viewerOf(auth.user);
  const role = await namespaceRole(db, auth.user?.id, row.traversal_ids);
  // GitLab's GroupPolicy has_projects: a project the viewer may see inside the group makes it readable.
  if (!canRead(viewer, row.visibility, role) && !(await groupHasProjectVisibleTo(db, viewer, row.id))) throw notFound('Group');
  return { row, role, viewer };
}

/** `:id` of the projects endpoints: numeric id or URL-encoded `namespace/path`; 404 when not visible. */
export async function findVisibleProject(c: Context, auth: Auth, id: string): Promise<Visible<ProjectRow>> {
  const { db } = appContext(c);
  const row = await db.selectFrom('projects').selectAll().where('pending_delete', '=', false).where(idOrPath(id, 'path_with_namespace', 'Project')).executeTakeFirst();
  if (!row) throw notFound('Project');
  const viewer = viewerOf(auth.user);
  const role = await projectRole(db, auth.user?.id, row);
  if (!canRead(viewer, row.visibility, role)) throw notFound('Project');
  return { row, role, viewer };
}
