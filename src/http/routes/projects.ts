import { Hono, type Context } from 'hono';
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { createProject, updateProject } from '../../commands/projects.js';
import { avatarUpload } from '../../commands/uploads.js';
import { projectRunnersToken } from '../../security/runners-tokens.js';
import type { Database } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { accepted, forbidden, invalid, notFound, notModified } from '../../domain/errors.js';
import { can } from '../../domain/policy/can.js';
import { licensed } from '../../domain/policy/licensed.js';
import type { ProjectChanges, ProjectSettings } from '../../domain/projects/settings.js';
import { parameterize } from '../../domain/projects/validation.js';
import { groupAccessLevelOf, viewerOf } from '../../projections/access.js';
import type { UserRow } from '../../projections/users.js';
import { findUserByIdOrUsername } from '../../projections/users/queries.js';
import type { NamespaceRow } from '../../projections/groups/tables.js';
import {
  type ProjectListFilters,
  findProjectRow,
  groupProjectsQuery,
  isStarredBy,
  personalNamespaceId,
  personalProjectCount,
  projectListQuery,
} from '../../projections/projects/queries.js';
import type { ProjectRow } from '../../projections/projects/tables.js';
import { presentProjects, type ProjectsView } from '../entities/projects.js';
import { authenticate, requireWriter } from '../kernel/auth.js';
import { appContext, today, type AppEnv } from '../kernel/context.js';
import { limitReachedFirst, methodNotAllowed, rendersInvalid } from '../kernel/errors.js';
import { pageOf, paginate, setKeysetNextLink } from '../kernel/pagination.js';
import { params, rawParams, t, withDefault, type Shape } from '../kernel/params.js';
import { documented, MESSAGE, REFUSED } from '../kernel/documented.js';
import { userGroup, userProject, type ProjectScope } from '../kernel/scope.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import {
  UPDATE_AT_LEAST_ONE_OF,
  createParams,
  createRules,
  groupListParams,
  listParams,
  settingsFrom,
  updateParams,
  type Input,
} from './projects/params.js';
import { projects } from '../../domain/projects/aggregate.js';
import { run } from '../../commands/kernel/run.js';

// ───────────────────────────── Helpers ─────────────────────────────

async function namespaceRow(c: Context, id: number): Promise<NamespaceRow | undefined> {
  return appContext(c).db.selectFrom('namespaces').selectAll().where('id', '=', id).where('pending_delete', '=', false).executeTakeFirst();
}

/** GitLab: User#can_create_project? — projects_limit above the personal project count. */
async function underProjectLimit(c: Context, user: Pick<UserRow, 'id' | 'projects_limit'>): Promise<boolean> {
  const { db } = appContext(c);
  const namespaceId = await personalNamespaceId(db, user.id);
  const count = namespaceId === undefined ? 0 : await personalProjectCount(db, namespaceId);
  return user.projects_limit - count > 0;
}

/** The project again after a command (inline projection: the write is visible at once). */
async function reloaded(c: Context, id: number): Promise<ProjectRow> {
  const row = await findProjectRow(appContext(c).db, id);
  if (!row) throw notFound('Project');
  return row;
}

async function present(c: Context, viewer: Viewer | null, row: ProjectRow, view: ProjectsView = {}) {
  const { db, config } = appContext(c);
  const [record] = await presentProjects(db, config, viewer, [row], view);
  return record!;
}

/** user_can_admin_project: the runners token (and import error, git strategy) for maintainers and admins. */
async function adminTokens(c: Context, project: ProjectScope): Promise<Map<number, string>> {
  if (!project.can('admin_project')) return new Map();
  return new Map([[project.row.id, await projectRunnersToken(appContext(c).db, project.row.id)]]);
}

type ProjectQuery = SelectQueryBuilder<Database, 'projects', ProjectRow>;

const KEYSET_UNAVAILABLE = () => methodNotAllowed('Keyset pagination is not yet available for this type of request');

/**
 * One page of a project list: offset pagination (GitLab's headers), or keyset with
 * `pagination=keyset&order_by=id` — only a `Link rel="next"` carrying id_after/id_before.
 */
async function pageOfProjects(c: Context, query: ProjectQuery, order: { order_by: string; sort: 'asc' | 'desc' }): Promise<ProjectRow[]> {
  const raw = await rawParams(c);
  const ordered = (q: ProjectQuery) =>
    order.order_by === 'id' ? q.orderBy('projects.id', order.sort) : q.orderBy(`projects.${order.order_by}` as 'projects.id', order.sort).orderBy('projects.id', order.sort);
  if (raw.pagination !== 'keyset') return paginate(c, query, ordered);
  // GitLab (Gitlab::Pagination::Keyset.available?): projects ordered by id only.
  if (order.order_by !== 'id') throw KEYSET_UNAVAILABLE();
  const { perPage } = await pageOf(c);
  // One more row than the page tells whether there is a next page.
  const rows = await ordered(query).limit(perPage + 1).execute();
  const page = rows.slice(0, perPage);
  const last = page.at(-1);
  if (rows.length > perPage && last) {
    setKeysetNextLink(c, order.sort === 'desc' ? { id_before: last.id } : { id_after: last.id }, perPage);
  }
  return page;
}

/** Filters of both lists that only administrators' custom attributes and languages can empty. */
function impossible(raw: Input, viewer: Viewer | null, withProgrammingLanguage: string | undefined): boolean {
  // GitLab: no project has detected languages here, and none has custom attributes.
  if (withProgrammingLanguage !== undefined) return true;
  const wanted = raw.custom_attributes;
  return Boolean(viewer?.isAdmin && wanted && typeof wanted === 'object' && !Array.isArray(wanted) && Object.keys(wanted).length > 0);
}

// ───────────────────────────── Routes ─────────────────────────────

const showShape = {
  statistics: withDefault(t.boolean(), false),
  with_custom_attributes: withDefault(t.boolean(), false),
  license: withDefault(t.boolean(), false),
} satisfies Shape;

/** GET /projects and the lists that share its finder (a user's, their starred, a project's forks). */
export const LIST_PROJECTS_DOC = { params: listParams, auth: 'optional', responses: { 200: 'Project[]', 405: 'Error' } } as const;

export const projectRoutes = new Hono<AppEnv>()
  .get('/projects', documented({ summary: 'Get a list of visible projects for authenticated user', ...LIST_PROJECTS_DOC }), async (c) => listProjects(c))

  // GitLab: PersonalProjectsFinder and StarredProjectsFinder, presented like GET /projects.
  .get('/users/:user_id/projects', documented({ summary: 'Get a user projects', ...LIST_PROJECTS_DOC, responses: { ...LIST_PROJECTS_DOC.responses, 404: 'Error' } }), async (c) => userProjects(c, 'personal'))
  .get('/users/:user_id/starred_projects', documented({ summary: 'Get projects starred by a user', ...LIST_PROJECTS_DOC, responses: { ...LIST_PROJECTS_DOC.responses, 404: 'Error' } }), async (c) => userProjects(c, 'starred'))

  .post('/projects', documented({ summary: 'Create new project', params: createParams, responses: { 201: 'Project', 403: 'Error' } }), rendersInvalid(limitReachedFirst), async (c) => {
    const w = await requireWriter(c);
    const p = await params(c, createParams, createRules);
    const { db } = appContext(c);
    const viewer = viewerOf(w.auth.user, today(c))!;
    const settings = settingsFrom(p, licensed(appContext(c).config.plan, 'ee'));
    // GitLab (Projects::CreateService): the name from the path, or the path from the name.
    if (settings.name === undefined || settings.name === '') {
      if (settings.path !== undefined && settings.path !== '') settings.name = settings.path;
    }
    if (settings.path === undefined || settings.path === '') {
      if (settings.name !== undefined && settings.name !== '') settings.path = parameterize(settings.name);
    }
    settings.name ??= '';
    settings.path ??= '';

    // GitLab: the caller's personal namespace by default; another needs create_projects on it.
    const namespaceId = p.namespace_id ?? (await personalNamespaceId(db, w.auth.user.id));
    const namespace = namespaceId === undefined ? undefined : await namespaceRow(c, namespaceId);
    let allowed = false;
    if (namespace?.kind === 'user') {
      // GitLab (NamespacePolicy): a named personal namespace also needs the caller to be under
      // their own project limit; without namespace_id the limit is the model's 403 instead.
      const canCreatePersonalProject = p.namespace_id === undefined || (await underProjectLimit(c, w.auth.user));
      allowed = can({ kind: 'namespace', viewer, ownerId: namespace.owner_id, canCreatePersonalProject }, 'create_projects');
    } else if (namespace) {
      allowed = can({ kind: 'group', viewer, role: await groupAccessLevelOf(db, viewer, namespace.id), group: namespace }, 'create_projects');
    }
    if (!namespace || !allowed) throw invalid({ namespace: ['is not valid'] });
    const avatar = await avatarUpload(p.avatar);

    const created = await createProject(
      w,
      {
        settings: settings as Pick<ProjectSettings, 'name' | 'path'> & Partial<ProjectSettings>,
        namespace,
        creator: w.auth.user,
        initializeWithReadme: p.initialize_with_readme ?? false,
        defaultBranch: p.default_branch,
        avatar,
      },
    );
    const project = await userProject(c, w.auth, undefined, String(created.state.id));
    return c.json(await present(c, viewer, project.row, { adminTokens: await adminTokens(c, project) }), 201);
  })

  .get('/projects/:id', documented({ summary: 'Get a single project', params: showShape, auth: 'optional', responses: { 200: 'Project', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, showShape);
    const project = await userProject(c, auth);
    const { viewer } = project;
    if (!viewer) return c.json(await present(c, null, project.row, { simple: true, license: p.license }));
    return c.json(
      await present(c, viewer, project.row, {
        withAccess: true,
        single: true,
        adminTokens: await adminTokens(c, project),
        statistics: p.statistics,
        license: p.license,
        customAttributes: viewer.isAdmin && p.with_custom_attributes,
      }),
    );
  })

  .put('/projects/:id', documented({ summary: 'Update an existing project', params: updateParams, responses: { 200: 'Project', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const p = await params(c, updateParams, { atLeastOneOf: [UPDATE_AT_LEAST_ONE_OF] });
    // GitLab: authorize_admin_project, then rename_project for a name, change_visibility_level for a visibility.
    const project = await userProject(c, w.auth, 'admin_project');
    const { viewer, row } = project;
    if (p.name !== undefined && p.name !== '' && !project.can('rename_project')) throw forbidden();
    if (p.visibility !== undefined && !project.can('change_visibility_level')) throw forbidden();
    const namespace = await namespaceRow(c, row.namespace_id);
    if (!namespace) throw notFound('Project');
    const changes: ProjectChanges = { ...settingsFrom(p, licensed(appContext(c).config.plan, 'ee')), ...(p.default_branch !== undefined ? { default_branch: p.default_branch } : {}) };
    const avatar = await avatarUpload(p.avatar);
    await updateProject(w, row, namespace, changes, viewer!, avatar);
    const updated = await reloaded(c, row.id);
    return c.json(await present(c, viewer, updated, { adminTokens: await adminTokens(c, project) }));
  })

  .post('/projects/:id/archive', documented({ summary: 'Archive a project', responses: { 201: 'Project', ...REFUSED } }), async (c) => archiving(c, true))
  .post('/projects/:id/unarchive', documented({ summary: 'Unarchive a project', responses: { 201: 'Project', ...REFUSED } }), async (c) => archiving(c, false))

  .post('/projects/:id/star', documented({ summary: 'Star a project', responses: { 201: 'Project', 304: null, 404: 'Error' } }), async (c) => starring(c, true))
  .post('/projects/:id/unstar', documented({ summary: 'Unstar a project', responses: { 201: 'Project', 304: null, 404: 'Error' } }), async (c) => starring(c, false))

  .delete('/projects/:id', documented({ summary: 'Remove a project', responses: { 202: MESSAGE, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    // GitLab: remove_project is an owner right (namespace owner, group owner, admin).
    const project = await userProject(c, w.auth, 'remove_project');
    checkUnmodifiedSince(c, project.row.updated_at);
    await run(w, projects, project.row.id, { type: 'ScheduleProjectDeletion' });
    throw accepted();
  })

  // ───────────────────────────── Group projects ─────────────────────────────

  .get('/groups/:id/projects', documented({ summary: 'Get a list of projects in this group.', params: groupListParams, auth: 'optional', responses: { 200: 'Project[]', 404: 'Error', 405: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, groupListParams);
    const group = await userGroup(c, auth);
    const { viewer } = group;
    const { db, config } = appContext(c);
    let query = groupProjectsQuery(db, viewer, group.row.id, {
      ...listFilters(p),
      withShared: p.with_shared,
      includeSubgroups: p.include_subgroups,
    });
    if (impossible(await rawParams(c), viewer, undefined)) query = query.where(sql<SqlBool>`false`);
    const rows = await pageOfProjects(c, query, p);
    // GitLab: Entities::Project for everyone (anonymous too), BasicProjectDetails with simple.
    return c.json(await presentProjects(db, config, viewer, rows, { simple: p.simple, customAttributes: Boolean(viewer?.isAdmin) && p.with_custom_attributes, namespaces: [group.row] }));
  });

/** The finder filters both project lists share, from their request parameters. */
function listFilters(p: {
  owned?: boolean | undefined;
  starred?: boolean | undefined;
  min_access_level?: number | undefined;
  visibility?: ProjectListFilters['visibility'];
  search?: string | undefined;
  archived?: boolean | undefined;
  with_issues_enabled?: boolean | undefined;
  with_merge_requests_enabled?: boolean | undefined;
  id_after?: number | undefined;
  id_before?: number | undefined;
}): ProjectListFilters {
  return {
    owned: p.owned,
    starred: p.starred,
    minAccessLevel: p.min_access_level,
    visibility: p.visibility,
    search: p.search,
    archived: p.archived,
    withIssuesEnabled: p.with_issues_enabled,
    withMergeRequestsEnabled: p.with_merge_requests_enabled,
    idAfter: p.id_after,
    idBefore: p.id_before,
  };
}

/** GET /projects, a user's projects or starred projects, a project's forks: one finder, one presentation. */
export async function listProjects(c: Context, scope: { personalNamespaceId?: number; starredBy?: number; forkedFrom?: number } = {}) {
  const auth = await authenticate(c);
  const p = await params(c, listParams);
  const viewer = viewerOf(auth.user, today(c));
  const { db, config } = appContext(c);
  const filters: ProjectListFilters = { ...listFilters(p), membership: p.membership, ...scope };
  let query = projectListQuery(db, viewer, filters);
  if (impossible(await rawParams(c), viewer, p.with_programming_language)) query = query.where(sql<SqlBool>`false`);
  const rows = await pageOfProjects(c, query, p);
  // GitLab: anonymous callers get the simple view; signed-in callers ProjectWithAccess.
  const view: ProjectsView = viewer
    ? { simple: p.simple, withAccess: true, statistics: p.statistics, customAttributes: viewer.isAdmin && p.with_custom_attributes }
    : { simple: true };
  return c.json(await presentProjects(db, config, viewer, rows, view));
}

/** GET /users/:user_id/projects and /starred_projects: the user by id or username, 404 otherwise. */
async function userProjects(c: Context, kind: 'personal' | 'starred') {
  await authenticate(c);
  await params(c, listParams);
  const { db } = appContext(c);
  const target = await findUserByIdOrUsername(db, c.req.param('user_id') ?? '');
  if (!target) throw notFound('User');
  if (kind === 'starred') return listProjects(c, { starredBy: target.id });
  // A user without a personal namespace (none here) has no personal projects.
  return listProjects(c, { personalNamespaceId: (await personalNamespaceId(db, target.id)) ?? -1 });
}

/** POST /projects/:id/archive and /unarchive: owner rights; 201 with the project. */
async function archiving(c: Context, archive: boolean) {
  const w = await requireWriter(c);
  // GitLab: archive_project is an owner right (namespace owner, group owner, admin).
  const project = await userProject(c, w.auth, 'archive_project');
  await run(w, projects, project.row.id, { type: archive ? 'ArchiveProject' : 'UnarchiveProject' });
  return c.json(await present(c, project.viewer, await reloaded(c, project.row.id)), 201);
}

/** POST /projects/:id/star and /unstar: 201 with the project, 304 when nothing changes. */
async function starring(c: Context, star: boolean) {
  const w = await requireWriter(c);
  const project = await userProject(c, w.auth);
  const { db } = appContext(c);
  const starred = await isStarredBy(db, project.row.id, w.auth.user.id);
  if (starred === star) throw notModified();
  await run(w, projects, project.row.id, { type: star ? 'StarProject' : 'UnstarProject', userId: w.auth.user.id });
  return c.json(await present(c, project.viewer, await reloaded(c, project.row.id)), 201);
}

