import { Hono, type Context } from 'hono';
import { forkProject, linkFork, unlinkFork } from '../../../commands/project-forks.js';
import type { Db } from '../../../database/database.js';
import type { Viewer } from '../../../domain/access.js';
import { invalid, notFound, notModified } from '../../../domain/errors.js';
import { can } from '../../../domain/policy/can.js';
import { groupAccessLevelOf, viewerOf } from '../../../projections/access.js';
import type { NamespaceRow } from '../../../projections/groups/tables.js';
import { personalNamespaceId, personalProjectCount } from '../../../projections/projects/queries.js';
import type { UserRow } from '../../../projections/users.js';
import { projectRunnersToken } from '../../../security/runners-tokens.js';
import { presentProjects } from '../../entities/projects.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, today, type AppEnv, type Auth } from '../../kernel/context.js';
import { rendersInvalid } from '../../kernel/errors.js';
import { checkUnmodifiedSince } from '../../kernel/request.js';
import { declared, optional, t, type Shape } from '../../kernel/params.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { userProject } from '../../kernel/scope.js';
import { LIST_PROJECTS_DOC, listProjects } from '../projects.js';

// ───────────────────────────── Namespaces ─────────────────────────────

/** GitLab 12.10's find_namespace: all digits is an id, anything else a full path (any case). */
export function findNamespace(db: Db, id: string): Promise<NamespaceRow | undefined> {
  const query = db.selectFrom('namespaces').selectAll().where('pending_delete', '=', false);
  if (/^\d+$/.test(id)) return Number(id) > 2147483647 ? Promise.resolve(undefined) : query.where('id', '=', Number(id)).executeTakeFirst();
  return query.where((eb) => eb(eb.fn('lower', ['full_path']), '=', id.toLowerCase())).executeTakeFirst();
}

/** `can?(user, :create_projects, namespace)`: GroupPolicy for a group, NamespacePolicy (with the project limit) for a personal one. */
export async function mayCreateProjectsIn(db: Db, viewer: Viewer, user: Pick<UserRow, 'id' | 'projects_limit'>, namespace: NamespaceRow): Promise<boolean> {
  if (namespace.kind === 'group') return can({ kind: 'group', viewer, role: await groupAccessLevelOf(db, viewer, namespace.id), group: namespace }, 'create_projects');
  const own = await personalNamespaceId(db, user.id);
  const count = own === undefined ? 0 : await personalProjectCount(db, own);
  return can({ kind: 'namespace', viewer, ownerId: namespace.owner_id, canCreatePersonalProject: user.projects_limit - count > 0 }, 'create_projects');
}

/** Entities::Project of one project as `auth` sees it (`userCanAdmin`: GitLab's user_can_admin_project option, the runners token). */
export async function presentProject(c: Context, auth: Auth, id: number, userCanAdmin = false) {
  const { db, config } = appContext(c);
  const scope = await userProject(c, auth, undefined, String(id));
  const adminTokens = userCanAdmin && scope.can('admin_project') ? new Map([[id, await projectRunnersToken(db, id)]]) : new Map<number, string>();
  const [record] = await presentProjects(db, config, scope.viewer, [scope.row], { adminTokens });
  return record!;
}

// ───────────────────────────── Routes ─────────────────────────────

const forkShape = {
  namespace: optional(t.string()),
  namespace_id: optional(t.integer()),
  namespace_path: optional(t.string()),
  path: optional(t.string()),
  name: optional(t.string()),
} satisfies Shape;

/**
 * Forks (GitLab 12.10 lib/api/projects.rb): POST /projects/:id/fork, GET /projects/:id/forks,
 * POST /projects/:id/fork/:forked_from_id, DELETE /projects/:id/fork.
 */
export const projectForkRoutes = new Hono<AppEnv>()
  // GitLab: a refused project (a taken name or path, the personal project limit) is `conflict!(errors.messages)`.
  .post('/projects/:id/fork', documented({ summary: 'Fork new project for the current user or provided namespace.', params: forkShape, responses: { 201: 'Project', 404: 'Error', 409: 'Error' } }), rendersInvalid((fields) => ({ status: 409, body: { message: fields } })), async (c) => {
    const w = await requireWriter(c);
    const p = await declared(c, forkShape);
    const source = await userProject(c, w.auth);
    const { db } = appContext(c);
    const viewer = viewerOf(w.auth.user, today(c))!;
    const asked = p.namespace_id !== undefined ? String(p.namespace_id) : (p.namespace_path ?? p.namespace);
    let namespace: NamespaceRow | undefined;
    if (asked !== undefined && asked !== '') {
      namespace = await findNamespace(db, asked);
      if (!namespace || !(await mayCreateProjectsIn(db, viewer, w.auth.user, namespace))) throw notFound('Target Namespace');
    } else {
      // GitLab: the caller's own namespace (Projects::CreateService then applies the project limit).
      const own = await personalNamespaceId(db, w.auth.user.id);
      namespace = own === undefined ? undefined : await findNamespace(db, String(own));
      if (!namespace) throw notFound('Target Namespace');
    }
    // GitLab 12.10 (ForkService#build_fork_network_member in CreateService's relations block):
    // who may read the project but not fork it gets the fork's error, 409 through conflict!.
    if (!source.can('fork_project')) throw invalid({ forked_from_project_id: ['is forbidden'] });
    const id = await forkProject(w, { source: source.row, namespace, creator: w.auth.user, name: p.name || undefined, path: p.path || undefined });
    return c.json(await presentProject(c, w.auth, id, true), 201);
  })

  .get('/projects/:id/forks', documented({ summary: 'List forks of this project', ...LIST_PROJECTS_DOC, responses: { ...LIST_PROJECTS_DOC.responses, 404: 'Error' } }), async (c) => {
    const source = await userProject(c, await authenticate(c));
    return listProjects(c, { forkedFrom: source.row.id });
  })

  .post('/projects/:id/fork/:forked_from_id', documented({ summary: 'Mark this project as forked from another', responses: { 201: 'Project', ...REFUSED, 409: 'Error' } }), async (c) => {
    // GitLab 12.10: `authorize! :admin_project, user_project`, then the source (find_project!).
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth, 'admin_project');
    const from = await userProject(c, w.auth, undefined, c.req.param('forked_from_id'));
    // ForkService#link_existing_project: a caller who may not fork the source links nothing, and
    // the endpoint's value is then nil: Grape answers 201 with `null`.
    if (!from.can('fork_project') && project.row.forked_from_project_id === null) return c.json(null, 201);
    await linkFork(w, project.row.id, from.row.id);
    return c.json(await presentProject(c, w.auth, project.row.id), 201);
  })

  .delete('/projects/:id/fork', documented({ summary: 'Remove a forked_from relationship', responses: { 204: null, 304: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth, 'remove_fork_project');
    // GitLab: destroy_conditionally!, then 204, or 304 when the project is no fork.
    checkUnmodifiedSince(c, project.row.updated_at);
    if (!(await unlinkFork(w, project.row.id))) throw notModified();
    return c.body(null, 204);
  });
