import type { Context } from 'hono';
import type { Viewer } from '../../domain/access.js';
import { canRead } from '../../domain/access.js';
import { namespaceRole, projectRole, viewerOf } from '../../projections/access.js';
import { groupHasProjectVisibleTo, type NamespaceRow } from '../../projections/namespaces.js';
import type { ProjectRow } from '../../projections/projects.js';
import type { Auth } from './auth.js';
import { appContext } from './context.js';
import { notFound } from './errors.js';

/** A group or project as the caller sees it: the row, the caller's effective role and viewer. */
export interface Visible<Row> {
  readonly row: Row;
  readonly role: number | null;
  readonly viewer: Viewer | null;
}

const INT4_MAX = 2147483647;
const isNumericId = (id: string) => /^\d+$/.test(id);

/**
 * `:id` of the groups endpoints: a numeric id or a URL-encoded full path. A group the
 * caller may not see is 404 `{"message":"404 Group Not Found"}`, never 403.
 */
export async function findVisibleGroup(c: Context, auth: Auth, id: string): Promise<Visible<NamespaceRow>> {
  const { db } = appContext(c);
  let query = db.selectFrom('namespaces').selectAll().where('kind', '=', 'group').where('pending_delete', '=', false);
  if (isNumericId(id)) {
    if (Number(id) > INT4_MAX) throw notFound('Group');
    query = query.where('id', '=', Number(id));
  } else {
    query = query.where((eb) => eb(eb.fn('lower', ['full_path']), '=', id.toLowerCase()));
  }
  const row = await query.executeTakeFirst();
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
  let query = db.selectFrom('projects').selectAll().where('pending_delete', '=', false);
  if (isNumericId(id)) {
    if (Number(id) > INT4_MAX) throw notFound('Project');
    query = query.where('id', '=', Number(id));
  } else {
    query = query.where((eb) => eb(eb.fn('lower', ['path_with_namespace']), '=', id.toLowerCase()));
  }
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('Project');
  const viewer = viewerOf(auth.user);
  const role = await projectRole(db, auth.user?.id, row);
  if (!canRead(viewer, row.visibility, role)) throw notFound('Project');
  return { row, role, viewer };
}
