import { Hono, type Context } from 'hono';
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import {
  archiveProject,
  createProject,
  projectRunnersToken,
  scheduleProjectDeletion,
  starProject,
  unarchiveProject,
  unstarProject,
  updateProject,
} from '../../commands/projects.js';
import type { Database } from '../../database.js';
import { ACCESS, GROUP_ACCESS_LEVELS, VISIBILITIES, canAdminProject, canCreateProjectIn, canOwnProject, type Viewer } from '../../domain/access.js';
import { DomainError } from '../../domain/errors.js';
import {
  AUTO_DEVOPS_DEPLOY_STRATEGIES,
  FEATURE_ACCESS_LEVELS,
  MERGE_METHODS,
  parameterize,
  type ProjectChanges,
  type ProjectSettings,
} from '../../domain/projects.js';
import { namespaceRole, projectRole, viewerOf } from '../../projections/access.js';
import type { NamespaceRow } from '../../projections/namespaces.js';
import {
  type ProjectListFilters,
  type ProjectRow,
  findProjectRow,
  groupProjectsQuery,
  isStarredBy,
  personalNamespaceId,
  projectListQuery,
} from '../../projections/projects.js';
import { presentProjects, type ProjectsView } from '../entities/projects.js';
import { authenticate, eventMetadata, requireUser } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { ApiError, forbidden, notFound } from '../kernel/errors.js';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, paginate, setKeysetNextLink } from '../kernel/pagination.js';
import { optional, params, rawParams, t, withDefault, type Rules } from '../kernel/params.js';
import { findVisibleGroup, findVisibleProject, type Visible } from '../kernel/sources.js';

// ───────────────────────────── Parameters ─────────────────────────────

const feature = () => optional(t.values(FEATURE_ACCESS_LEVELS as unknown as ['disabled', 'private', 'enabled']));
const visibility = () => optional(t.values(VISIBILITIES as unknown as ['private', 'internal', 'public']));

// GitLab 12.10 (lib/api/helpers/projects_helpers.rb): optional_project_params_ce, then EE's.
const projectParams = {
  description: optional(t.string()),
  build_git_strategy: optional(t.values(['fetch', 'clone'])),
  build_timeout: optional(t.integer()),
  auto_cancel_pending_pipelines: optional(t.values(['disabled', 'enabled'])),
  build_coverage_regex: optional(t.string()),
  ci_config_path: optional(t.string()),
  issues_enabled: optional(t.boolean()),
  merge_requests_enabled: optional(t.boolean()),
  wiki_enabled: optional(t.boolean()),
  jobs_enabled: optional(t.boolean()),
  snippets_enabled: optional(t.boolean()),
  issues_access_level: feature(),
  repository_access_level: feature(),
  merge_requests_access_level: feature(),
  wiki_access_level: feature(),
  builds_access_level: feature(),
  snippets_access_level: feature(),
  pages_access_level: optional(t.values(['disabled', 'private', 'enabled', 'public'])),
  emails_disabled: optional(t.boolean()),
  shared_runners_enabled: optional(t.boolean()),
  resolve_outdated_diff_discussions: optional(t.boolean()),
  remove_source_branch_after_merge: optional(t.boolean()),
  container_registry_enabled: optional(t.boolean()),
  lfs_enabled: optional(t.boolean()),
  visibility: visibility(),
  public_builds: optional(t.boolean()),
  // Entities expose public_jobs; clients send it back under that name too.
  public_jobs: optional(t.boolean()),
  request_access_enabled: optional(t.boolean()),
  only_allow_merge_if_pipeline_succeeds: optional(t.boolean()),
  only_allow_merge_if_all_discussions_are_resolved: optional(t.boolean()),
  tag_list: optional(t.array(t.string())),
  avatar: optional(t.file()),
  printing_merge_request_link_enabled: optional(t.boolean()),
  merge_method: optional(t.values(MERGE_METHODS as unknown as ['merge', 'rebase_merge', 'ff'])),
  initialize_with_readme: optional(t.boolean()),
  ci_default_git_depth: optional(t.integer()),
  auto_devops_enabled: optional(t.boolean()),
  auto_devops_deploy_strategy: optional(t.values(AUTO_DEVOPS_DEPLOY_STRATEGIES as unknown as ['continuous', 'manual', 'timed_incremental'])),
  autoclose_referenced_issues: optional(t.boolean()),
  suggestion_commit_message: optional(t.string()),
  // EE
  approvals_before_merge: optional(t.integer()),
  external_authorization_classification_label: optional(t.string()),
  packages_enabled: optional(t.boolean()),
  service_desk_enabled: optional(t.boolean()),
  mirror: optional(t.boolean()),
};

const createParams = {
  name: optional(t.string()),
  path: optional(t.string()),
  ...projectParams,
  // Not declared by GitLab 12.10's POST /projects; accepted as the README's branch.
  default_branch: optional(t.string()),
  namespace_id: optional(t.integer()),
  import_url: optional(t.string()),
  template_name: optional(t.string()),
  template_project_id: optional(t.integer()),
};
const createRules: Rules = { atLeastOneOf: [['name', 'path']], mutuallyExclusive: [['import_url', 'template_name', 'template_project_id']] };

const updateParams = { name: optional(t.string()), default_branch: optional(t.string()), path: optional(t.string()), ...projectParams };
// GitLab: Helpers::ProjectsHelpers.update_params_at_least_one_of.
const UPDATE_AT_LEAST_ONE_OF = [
  'auto_devops_enabled', 'auto_devops_deploy_strategy', 'auto_cancel_pending_pipelines', 'build_coverage_regex', 'build_git_strategy',
  'build_timeout', 'builds_access_level', 'ci_config_path', 'ci_default_git_depth', 'container_registry_enabled', 'default_branch',
  'description', 'autoclose_referenced_issues', 'issues_access_level', 'lfs_enabled', 'merge_requests_access_level', 'merge_method', 'name',
  'only_allow_merge_if_all_discussions_are_resolved', 'only_allow_merge_if_pipeline_succeeds', 'path', 'printing_merge_request_link_enabled',
  'public_builds', 'remove_source_branch_after_merge', 'repository_access_level', 'request_access_enabled', 'resolve_outdated_diff_discussions',
  'shared_runners_enabled', 'snippets_access_level', 'tag_list', 'visibility', 'wiki_access_level', 'avatar', 'issues_enabled', 'jobs_enabled',
  'merge_requests_enabled', 'wiki_enabled', 'snippets_enabled',
] as const;

const sortParams = {
  order_by: withDefault(t.values(['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at']), 'created_at'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
};

const minAccessLevel = () => optional(t.integerValues(GROUP_ACCESS_LEVELS as unknown as [10, 20, 30, 40, 50]));

// GitLab 12.10 (lib/api/projects.rb): collection_params, statistics_params, with_custom_attributes.
const listParams = {
  ...sortParams,
  archived: optional(t.boolean()),
  visibility: visibility(),
  search: optional(t.string()),
  owned: withDefault(t.boolean(), false),
  starred: withDefault(t.boolean(), false),
  membership: withDefault(t.boolean(), false),
  with_issues_enabled: withDefault(t.boolean(), false),
  with_merge_requests_enabled: withDefault(t.boolean(), false),
  with_programming_language: optional(t.string()),
  min_access_level: minAccessLevel(),
  id_after: optional(t.integer()),
  id_before: optional(t.integer()),
  simple: withDefault(t.boolean(), false),
  statistics: withDefault(t.boolean(), false),
  with_custom_attributes: withDefault(t.boolean(), false),
};

// GitLab 12.10 (lib/api/groups.rb): GET /groups/:id/projects.
const groupListParams = {
  archived: withDefault(t.boolean(), false),
  visibility: visibility(),
  search: optional(t.string()),
  ...sortParams,
  simple: withDefault(t.boolean(), false),
  owned: withDefault(t.boolean(), false),
  starred: withDefault(t.boolean(), false),
  with_issues_enabled: withDefault(t.boolean(), false),
  with_merge_requests_enabled: withDefault(t.boolean(), false),
  with_shared: withDefault(t.boolean(), true),
  include_subgroups: withDefault(t.boolean(), false),
  min_access_level: minAccessLevel(),
  with_custom_attributes: withDefault(t.boolean(), false),
  with_security_reports: withDefault(t.boolean(), false),
  id_after: optional(t.integer()),
  id_before: optional(t.integer()),
};

type Input = Record<string, unknown>;

/** The five feature flags of the API and the access level each writes (ProjectFeaturesCompatibility). */
const FLAG_LEVELS = {
  issues_enabled: 'issues_access_level',
  merge_requests_enabled: 'merge_requests_access_level',
  wiki_enabled: 'wiki_access_level',
  jobs_enabled: 'builds_access_level',
  snippets_enabled: 'snippets_access_level',
} as const;

const PLAIN_SETTINGS = [
  'description', 'build_git_strategy', 'build_timeout', 'auto_cancel_pending_pipelines', 'build_coverage_regex', 'ci_config_path',
  'emails_disabled', 'shared_runners_enabled', 'resolve_outdated_diff_discussions', 'remove_source_branch_after_merge',
  'container_registry_enabled', 'lfs_enabled', 'visibility', 'request_access_enabled', 'only_allow_merge_if_pipeline_succeeds',
  'only_allow_merge_if_all_discussions_are_resolved', 'printing_merge_request_link_enabled', 'merge_method', 'ci_default_git_depth',
  'auto_devops_enabled', 'auto_devops_deploy_strategy', 'autoclose_referenced_issues', 'suggestion_commit_message',
] as const;
const EE_SETTINGS = ['approvals_before_merge', 'external_authorization_classification_label', 'packages_enabled', 'service_desk_enabled', 'mirror'] as const;
const ACCESS_LEVEL_SETTINGS = [
  'issues_access_level', 'repository_access_level', 'merge_requests_access_level', 'wiki_access_level', 'builds_access_level', 'snippets_access_level',
] as const;

/** Request fields onto project settings, the way GitLab's attribute writers take them. */
function settingsFrom(input: Input, paid: boolean): { -readonly [K in keyof ProjectSettings]?: ProjectSettings[K] } {
  const settings: Record<string, unknown> = {};
  if (input.name !== undefined) settings.name = input.name;
  if (input.path !== undefined) settings.path = input.path;
  for (const field of PLAIN_SETTINGS) if (input[field] !== undefined) settings[field] = input[field];
  if (paid) for (const field of EE_SETTINGS) if (input[field] !== undefined) settings[field] = input[field];
  // GitLab: jobs_enabled is builds_enabled; public_builds is what public_jobs shows.
  const publicJobs = input.public_builds ?? input.public_jobs;
  if (publicJobs !== undefined) settings.public_jobs = publicJobs;
  for (const [flag, level] of Object.entries(FLAG_LEVELS)) if (input[flag] !== undefined) settings[level] = input[flag] ? 'enabled' : 'disabled';
  // The access levels are declared after the flags: they win.
  for (const level of ACCESS_LEVEL_SETTINGS) if (input[level] !== undefined) settings[level] = input[level];
  // GitLab 12.10: pages `public` is stored as enabled for a public project.
  if (input.pages_access_level !== undefined) settings.pages_access_level = input.pages_access_level === 'public' ? 'enabled' : input.pages_access_level;
  if (input.tag_list !== undefined) settings.tag_list = [...new Set((input.tag_list as string[]).map((tag) => tag.trim()).filter(Boolean))].sort();
  return settings;
}

// ───────────────────────────── Helpers ─────────────────────────────

const paidTier = (c: Context) => appContext(c).config.plan !== 'free';

async function namespaceRow(c: Context, id: number): Promise<NamespaceRow | undefined> {
  return appContext(c).db.selectFrom('namespaces').selectAll().where('id', '=', id).where('pending_delete', '=', false).executeTakeFirst();
}

/**
 * GitLab's ProjectPolicy owner: the personal namespace's owner, or an owner of the group or
 * one of its ancestors (a project membership never reaches owner).
 */
async function ownsProject(c: Context, viewer: Viewer | null, project: ProjectRow): Promise<boolean> {
  if (!viewer) return false;
  const namespace = await namespaceRow(c, project.namespace_id);
  if (namespace?.kind === 'user') return canOwnProject(viewer, namespace.owner_id === viewer.id, null);
  return canOwnProject(viewer, false, await namespaceRole(appContext(c).db, viewer.id, project.traversal_ids));
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
async function adminTokens(c: Context, viewer: Viewer | null, row: ProjectRow, role: number | null): Promise<Map<number, string>> {
  if (!canAdminProject(viewer, role)) return new Map();
  return new Map([[row.id, await projectRunnersToken(appContext(c).db, row.id)]]);
}

/** GitLab's destroy_conditionally!: If-Unmodified-Since older than the resource → 412. */
function checkUnmodifiedSince(c: Context, updatedAt: Date) {
  const header = c.req.header('if-unmodified-since');
  if (!header) return;
  const since = new Date(header);
  if (!Number.isNaN(since.getTime()) && Math.floor(updatedAt.getTime() / 1000) > Math.floor(since.getTime() / 1000)) {
    throw new ApiError(412, { message: '412 Precondition Failed' });
  }
}

type ProjectQuery = SelectQueryBuilder<Database, 'projects', ProjectRow>;

const KEYSET_UNAVAILABLE = () => new ApiError(405, { error: 'Keyset pagination is not yet available for this type of request' });

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
  const requested = typeof raw.per_page === 'string' && /^\d+$/.test(raw.per_page) ? Number(raw.per_page) : DEFAULT_PER_PAGE;
  const perPage = Math.min(Math.max(requested, 1), MAX_PER_PAGE);
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

export const projectRoutes = new Hono<AppEnv>()
  .get('/projects', async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, listParams);
    const viewer = viewerOf(auth.user);
    const { db, config } = appContext(c);
    const filters: ProjectListFilters = {
      owned: p.owned,
      membership: p.membership,
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
    let query = projectListQuery(db, viewer, filters);
    if (impossible(await rawParams(c), viewer, p.with_programming_language)) query = query.where(sql<SqlBool>`false`);
    const rows = await pageOfProjects(c, query, p);
    // GitLab: anonymous callers get the simple view; signed-in callers ProjectWithAccess.
    const view: ProjectsView = viewer
      ? { simple: p.simple, withAccess: true, statistics: p.statistics, customAttributes: viewer.isAdmin && p.with_custom_attributes }
      : { simple: true };
    return c.json(await presentProjects(db, config, viewer, rows, view));
  })

  .post('/projects', async (c) => {
    const auth = await requireUser(c);
    const p = await params(c, createParams, createRules);
    const { commands, db } = appContext(c);
    const viewer = viewerOf(auth.user)!;
    const settings = settingsFrom(p, paidTier(c));
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
    const namespaceId = p.namespace_id ?? (await personalNamespaceId(db, auth.user.id));
    const namespace = namespaceId === undefined ? undefined : await namespaceRow(c, namespaceId);
    let allowed = false;
    if (namespace?.kind === 'user') allowed = viewer.isAdmin || namespace.owner_id === viewer.id;
    else if (namespace) allowed = canCreateProjectIn(viewer, namespace.project_creation_level, await namespaceRole(db, viewer.id, namespace.traversal_ids));
    if (!namespace || !allowed) throw new ApiError(400, { message: { namespace: ['is not valid'], limit_reached: [] } });

    let created;
    try {
      created = await createProject(
        commands,
        {
          settings: settings as Pick<ProjectSettings, 'name' | 'path'> & Partial<ProjectSettings>,
          namespace,
          creator: auth.user,
          initializeWithReadme: p.initialize_with_readme ?? false,
          defaultBranch: p.default_branch,
        },
        eventMetadata(c, auth),
      );
    } catch (error) {
      // GitLab: the personal project limit is a 403; other validation errors a 400 that also
      // shows the (empty) limit_reached key the endpoint looked at.
      if (error instanceof DomainError && error.code === 'invalid' && error.fields) {
        const { limit_reached, ...fields } = error.fields;
        if (limit_reached && limit_reached.length > 0) throw new ApiError(403, { message: [...limit_reached] });
        throw new ApiError(400, { message: { ...fields, limit_reached: [] } });
      }
      throw error;
    }
    const row = await reloaded(c, created.state.id!);
    const role = await projectRole(db, viewer.id, row);
    const personalOwner = namespace.kind === 'user' && namespace.owner_id === viewer.id ? ACCESS.MAINTAINER : null;
    return c.json(await present(c, viewer, row, { adminTokens: await adminTokens(c, viewer, row, role ?? personalOwner) }), 201);
  })

  .get('/projects/:id', async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, {
      statistics: withDefault(t.boolean(), false),
      with_custom_attributes: withDefault(t.boolean(), false),
      license: withDefault(t.boolean(), false),
    });
    const project = await findVisibleProject(c, auth, c.req.param('id'));
    const { viewer } = project;
    if (!viewer) return c.json(await present(c, null, project.row, { simple: true, license: p.license }));
    return c.json(
      await present(c, viewer, project.row, {
        withAccess: true,
        single: true,
        adminTokens: await adminTokens(c, viewer, project.row, project.role),
        statistics: p.statistics,
        license: p.license,
        customAttributes: viewer.isAdmin && p.with_custom_attributes,
      }),
    );
  })

  .put('/projects/:id', async (c) => {
    const auth = await requireUser(c);
    const p = await params(c, updateParams, { atLeastOneOf: [UPDATE_AT_LEAST_ONE_OF] });
    const project = await findVisibleProject(c, auth, c.req.param('id'));
    const { viewer, row } = project;
    // GitLab: admin_project (maintainers), and owner rights to rename or change the visibility.
    if (!canAdminProject(viewer, project.role)) throw forbidden();
    if ((p.name !== undefined && p.name !== '') || p.visibility !== undefined) {
      if (!(await ownsProject(c, viewer, row))) throw forbidden();
    }
    const namespace = await namespaceRow(c, row.namespace_id);
    if (!namespace) throw notFound('Project');
    const changes: ProjectChanges = { ...settingsFrom(p, paidTier(c)), ...(p.default_branch !== undefined ? { default_branch: p.default_branch } : {}) };
    try {
      await updateProject(appContext(c).commands, row, namespace, changes, eventMetadata(c, auth));
    } catch (error) {
      // GitLab (Projects::UpdateService): a missing branch is the service's error message.
      if (error instanceof DomainError && error.code === 'bad_request') throw new ApiError(400, { message: error.message });
      throw error;
    }
    const updated = await reloaded(c, row.id);
    return c.json(await present(c, viewer, updated, { adminTokens: await adminTokens(c, viewer, updated, project.role) }));
  })

  .post('/projects/:id/archive', async (c) => archiving(c, true))
  .post('/projects/:id/unarchive', async (c) => archiving(c, false))

  .post('/projects/:id/star', async (c) => starring(c, true))
  .post('/projects/:id/unstar', async (c) => starring(c, false))

  .delete('/projects/:id', async (c) => {
    const auth = await requireUser(c);
    const project = await findVisibleProject(c, auth, c.req.param('id'));
    // GitLab: remove_project is an owner right (namespace owner, group owner, admin).
    if (!(await ownsProject(c, project.viewer, project.row))) throw forbidden();
    checkUnmodifiedSince(c, project.row.updated_at);
    await scheduleProjectDeletion(appContext(c).commands, project.row.id, eventMetadata(c, auth));
    return c.json({ message: '202 Accepted' }, 202);
  })

  // ───────────────────────────── Group projects ─────────────────────────────

  .get('/groups/:id/projects', async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, groupListParams);
    const group = await findVisibleGroup(c, auth, c.req.param('id'));
    const { viewer } = group;
    const { db, config } = appContext(c);
    let query = groupProjectsQuery(db, viewer, group.row.id, {
      withShared: p.with_shared,
      includeSubgroups: p.include_subgroups,
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
    });
    if (impossible(await rawParams(c), viewer, undefined)) query = query.where(sql<SqlBool>`false`);
    const rows = await pageOfProjects(c, query, p);
    // GitLab: Entities::Project for everyone (anonymous too), BasicProjectDetails with simple.
    return c.json(await presentProjects(db, config, viewer, rows, { simple: p.simple, customAttributes: Boolean(viewer?.isAdmin) && p.with_custom_attributes }));
  });

/** POST /projects/:id/archive and /unarchive: owner rights; 201 with the project. */
async function archiving(c: Context, archive: boolean) {
  const auth = await requireUser(c);
  const project = await findVisibleProject(c, auth, c.req.param('id') ?? '');
  // GitLab: archive_project is an owner right (namespace owner, group owner, admin).
  if (!(await ownsProject(c, project.viewer, project.row))) throw forbidden();
  const metadata = eventMetadata(c, auth);
  const { commands } = appContext(c);
  await (archive ? archiveProject(commands, project.row.id, metadata) : unarchiveProject(commands, project.row.id, metadata));
  return c.json(await present(c, project.viewer, await reloaded(c, project.row.id)), 201);
}

/** POST /projects/:id/star and /unstar: 201 with the project, 304 when nothing changes. */
async function starring(c: Context, star: boolean) {
  const auth = await requireUser(c);
  const project: Visible<ProjectRow> = await findVisibleProject(c, auth, c.req.param('id') ?? '');
  const { commands, db } = appContext(c);
  const starred = await isStarredBy(db, project.row.id, auth.user.id);
  if (starred === star) return c.body(null, 304);
  const metadata = eventMetadata(c, auth);
  await (star ? starProject(commands, project.row.id, auth.user.id, metadata) : unstarProject(commands, project.row.id, auth.user.id, metadata));
  return c.json(await present(c, project.viewer, await reloaded(c, project.row.id)), 201);
}

