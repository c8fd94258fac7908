import { readTogether } from '../../database/read-together.js';
import { Hono, type Context } from 'hono';
import { sql, type SqlBool } from 'kysely';
import { createGroup, updateGroup } from '../../commands/groups.js';
import { avatarUpload } from '../../commands/uploads.js';
import { groupRunnersToken } from '../../security/runners-tokens.js';
import { GROUP_ACCESS_LEVELS, VISIBILITIES, type Viewer } from '../../domain/access.js';
import { accepted, forbidden, notFound, recordNotFound } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import { PROJECT_CREATION_LEVELS, SUBGROUP_CREATION_LEVELS, type GroupChanges, type GroupSettings } from '../../domain/groups/settings.js';
import { viewerOf } from '../../projections/access.js';
import { findGroupRow } from '../../projections/groups/facts.js';
import { customAttributesOf, findGroupCustomAttribute, groupListQuery } from '../../projections/groups/queries.js';
import type { NamespaceRow } from '../../projections/groups/tables.js';
import { projectReadableBy } from '../../projections/projects/queries.js';
import type { ProjectRow } from '../../projections/projects/tables.js';
import { toCustomAttribute, toGroup, toGroupDetail } from '../entities/groups.js';
import { presentProjects } from '../entities/projects.js';
import { authenticate, requireAdmin, requireWriter } from '../kernel/auth.js';
import { appContext, today, type AppEnv, type Auth } from '../kernel/context.js';
import { documented, MESSAGE, REFUSED } from '../kernel/documented.js';
import { failedToSave, rendersInvalid } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { optional, params, rawParams, required, t, withDefault, type Shape } from '../kernel/params.js';
import { userGroup, type GroupScope, type Visible } from '../kernel/scope.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { groups } from '../../domain/groups/aggregate.js';
import { run } from '../../commands/kernel/run.js';

// ───────────────────────────── Parameters ─────────────────────────────

const listParams = {
  statistics: withDefault(t.boolean(), false),
  skip_groups: optional(t.array(t.integer())),
  all_available: optional(t.boolean()),
  search: optional(t.string()),
  owned: withDefault(t.boolean(), false),
  order_by: withDefault(t.values(['name', 'path', 'id']), 'name'),
  sort: withDefault(t.values(['asc', 'desc']), 'asc'),
  min_access_level: optional(t.integerValues(GROUP_ACCESS_LEVELS as unknown as [10, 20, 30, 40, 50])),
  with_custom_attributes: withDefault(t.boolean(), false),
};

/** GitLab's optional_params (CE and EE) of POST and PUT /groups. */
const settingsParams = {
  description: optional(t.string()),
  visibility: optional(t.values(VISIBILITIES as unknown as ['private', 'internal', 'public'])),
  avatar: optional(t.file()),
  share_with_group_lock: optional(t.boolean()),
  require_two_factor_authentication: optional(t.boolean()),
  two_factor_grace_period: optional(t.integer()),
  project_creation_level: optional(t.values(PROJECT_CREATION_LEVELS as unknown as ['noone', 'maintainer', 'developer'])),
  auto_devops_enabled: optional(t.boolean()),
  subgroup_creation_level: optional(t.values(SUBGROUP_CREATION_LEVELS as unknown as ['owner', 'maintainer'])),
  emails_disabled: optional(t.boolean()),
  mentions_disabled: optional(t.boolean()),
  lfs_enabled: optional(t.boolean()),
  request_access_enabled: optional(t.boolean()),
  shared_runners_minutes_limit: optional(t.integer()),
  extra_shared_runners_minutes_limit: optional(t.integer()),
};

const createParams = {
  name: required(t.string()),
  path: required(t.string()),
  parent_id: optional(t.integer()),
  ...settingsParams,
};

const updateParams = {
  name: optional(t.string()),
  path: optional(t.string()),
  ...settingsParams,
  file_template_project_id: optional(t.integer()),
};

type SettingsInput = { [K in keyof typeof settingsParams]?: unknown } & { name?: string | undefined; path?: string | undefined; file_template_project_id?: number | undefined };

const SETTING_FIELDS = [
  'name', 'path', 'description', 'visibility', 'share_with_group_lock', 'require_two_factor_authentication', 'two_factor_grace_period',
  'project_creation_level', 'auto_devops_enabled', 'subgroup_creation_level', 'emails_disabled', 'mentions_disabled', 'lfs_enabled',
  'request_access_enabled',
] as const satisfies readonly (keyof GroupSettings)[];

/** The settings a request sets; the EE-only ones only on paid plans, and by administrators. */
function settingsOf(c: Context, input: SettingsInput, viewer: Viewer): GroupChanges {
  const { config } = appContext(c);
  const changes: Record<string, unknown> = {};
  for (const field of SETTING_FIELDS) if (input[field] !== undefined) changes[field] = input[field];
  if (licensed(config.plan, 'ee') && viewer.isAdmin) {
    for (const field of ['shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit'] as const) {
      if (input[field] !== undefined) changes[field] = input[field];
    }
  }
  // GitLab EE: custom file templates for a group are a premium feature.
  if (licensed(config.plan, 'custom_file_templates_for_namespace') && input.file_template_project_id !== undefined) {
    changes.file_template_project_id = input.file_template_project_id;
  }
  return changes as GroupChanges;
}

// ───────────────────────────── Helpers ─────────────────────────────

const isAdmin = (auth: Auth) => auth.user?.is_admin ?? false;

/** GitLab's `custom_attributes[key]=value` filter, read from the raw parameters (a hash or nothing). */
async function customAttributeFilter(c: Context): Promise<Record<string, string> | undefined> {
  const raw = (await rawParams(c)).custom_attributes;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  return Object.fromEntries(Object.entries(raw as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
}

/** GET /groups and GET /groups/:id/subgroups (GitLab's find_groups + present_groups). */
async function listGroups(c: Context, auth: Auth, parentId?: number) {
  const { db, config } = appContext(c);
  const p = await params(c, listParams);
  const viewer = viewerOf(auth.user, today(c));
  const query = groupListQuery(db, viewer, {
    // GitLab: all_available defaults to true for administrators only.
    allAvailable: p.all_available ?? viewer?.isAdmin ?? false,
    owned: p.owned,
    minAccessLevel: p.min_access_level,
    parentId,
    skipGroups: p.skip_groups,
    search: p.search,
    customAttributes: await customAttributeFilter(c),
  });
  const rows = await paginate(c, query, (q) => {
    const ordered = q.orderBy(`namespaces.${p.order_by}`, p.sort);
    return p.order_by === 'id' ? ordered : ordered.orderBy('namespaces.id', 'asc');
  });
  const admin = isAdmin(auth);
  const attributes = admin && p.with_custom_attributes ? await customAttributesOf(db, rows.map((r) => r.id)) : undefined;
  return c.json(
    rows.map((row) =>
      toGroup(row, config, { statistics: admin && p.statistics, customAttributes: attributes ? (attributes.get(row.id) ?? []) : undefined }),
    ),
  );
}

/** GitLab 12.6+: the group details carry at most 100 projects and 100 shared projects. */
const DETAIL_PROJECTS_LIMIT = 100;

/** GroupProjectsFinder only_owned / only_shared: what the viewer may see, newest first. */
async function detailProjects(c: Context, group: NamespaceRow, viewer: Viewer | null): Promise<{ projects: ProjectRow[]; shared: ProjectRow[] }> {
  const { db } = appContext(c);
  const visible = db.selectFrom('projects').selectAll('projects').where('projects.pending_delete', '=', false).where(projectReadableBy(viewer));
  const [projects, shared] = await readTogether(db, [
    visible.where('projects.namespace_id', '=', group.id).orderBy('projects.id', 'desc').limit(DETAIL_PROJECTS_LIMIT).compile(),
    visible
      .where(sql<SqlBool>`exists (select 1 from project_group_links l where l.project_id = projects.id and l.group_id = ${group.id})`)
      .orderBy('projects.id', 'desc')
      .limit(DETAIL_PROJECTS_LIMIT)
      .compile(),
  ]);
  return { projects, shared };
}

interface DetailOptions {
  readonly withProjects: boolean;
  readonly runnersToken: boolean;
  readonly statistics?: boolean;
  readonly customAttributes?: boolean;
}

async function presentDetail(c: Context, group: Visible<NamespaceRow>, options: DetailOptions) {
  const { db, config } = appContext(c);
  const customAttributes = options.customAttributes ? ((await customAttributesOf(db, [group.row.id])).get(group.row.id) ?? []) : undefined;
  if (!options.withProjects) return toGroup(group.row, config, { statistics: options.statistics ?? false, customAttributes });
  const { projects, shared } = await detailProjects(c, group.row, group.viewer);
  // GitLab: Entities::Project for both lists, presented together (one read of what they need).
  const presented = await presentProjects(db, config, group.viewer, [...projects, ...shared], { namespaces: [group.row] });
  return toGroupDetail(group.row, config, {
    statistics: options.statistics ?? false,
    customAttributes,
    runnersToken: options.runnersToken ? await groupRunnersToken(db, group.row.id) : undefined,
    projects: presented.slice(0, projects.length),
    sharedProjects: presented.slice(projects.length),
  });
}

/** The group row after a command (inline projection: the write is visible at once). */
async function reloaded(c: Context, id: number, role: number | null, viewer: Viewer | null): Promise<Visible<NamespaceRow>> {
  const row = await findGroupRow(appContext(c).db, id);
  if (!row) throw notFound('Group');
  return { row, role, viewer };
}

// ───────────────────────────── Routes ─────────────────────────────

const showParams = {
  with_custom_attributes: withDefault(t.boolean(), false),
  with_projects: withDefault(t.boolean(), true),
  statistics: withDefault(t.boolean(), false),
} satisfies Shape;
const valueParams = { value: required(t.string()) } satisfies Shape;

export const groupRoutes = new Hono<AppEnv>()
  .get('/groups', documented({ summary: 'List groups', params: listParams, auth: 'optional', responses: { 200: 'Group[]' } }), async (c) => listGroups(c, await authenticate(c)))

  .post('/groups', documented({ summary: 'Create a group', params: createParams, responses: { 201: 'GroupDetail', ...REFUSED } }), rendersInvalid(failedToSave('group')), async (c) => {
    const w = await requireWriter(c);
    const p = await params(c, createParams);
    const { config } = appContext(c);
    const viewer = viewerOf(w.auth.user, today(c))!;
    let parent: GroupScope | null = null;
    if (p.parent_id !== undefined) {
      parent = await userGroup(c, w.auth, 'create_subgroup', String(p.parent_id));
    } else if (!w.auth.user.can_create_group) {
      throw forbidden();
    }
    // GitLab EE: authenticated_as_admin! if params[:shared_runners_minutes_limit].
    if (licensed(config.plan, 'ee') && p.shared_runners_minutes_limit !== undefined && !viewer.isAdmin) throw forbidden();
    const settings = settingsOf(c, p, viewer) as GroupChanges & Pick<GroupSettings, 'name' | 'path'>;
    const avatar = await avatarUpload(p.avatar);
    const result = await createGroup(
      w,
      { settings, parent: parent?.row ?? null, creator: { id: w.auth.user.id, isAdmin: w.auth.user.is_admin }, avatar },
    );
    const group = await reloaded(c, result.state.id!, 50, viewer);
    return c.json(await presentDetail(c, group, { withProjects: true, runnersToken: false }), 201);
  })

  .get('/groups/:id', documented({ summary: 'Get a group', params: showParams, auth: 'optional', responses: { 200: 'GroupDetail', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, showParams);
    const group = await userGroup(c, auth);
    const admin = isAdmin(auth);
    return c.json(
      await presentDetail(c, group, {
        withProjects: p.with_projects,
        runnersToken: group.can('admin_group'),
        statistics: admin && p.statistics,
        customAttributes: admin && p.with_custom_attributes,
      }),
    );
  })

  .put('/groups/:id', documented({ summary: 'Update a group', params: updateParams, responses: { 200: 'GroupDetail', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const p = await params(c, updateParams);
    const group = await userGroup(c, w.auth, 'admin_group');
    const avatar = await avatarUpload(p.avatar);
    await updateGroup(w, group.row, settingsOf(c, p, group.viewer!), group.viewer!, avatar);
    return c.json(await presentDetail(c, await reloaded(c, group.row.id, group.role, group.viewer), { withProjects: true, runnersToken: false }));
  })

  .delete('/groups/:id', documented({ summary: 'Schedule a group for deletion', responses: { 202: MESSAGE, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const group = await userGroup(c, w.auth, 'admin_group');
    checkUnmodifiedSince(c, group.row.updated_at);
    await run(w, groups, group.row.id, { type: 'ScheduleGroupDeletion', fullPath: group.row.full_path });
    throw accepted();
  })

  .get('/groups/:id/subgroups', documented({ summary: "List a group's subgroups", params: listParams, auth: 'optional', responses: { 200: 'Group[]', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    await params(c, listParams);
    const parent = await userGroup(c, auth);
    return listGroups(c, auth, parent.row.id);
  })

  // ───────────── Custom attributes (administrators) ─────────────

  .get('/groups/:id/custom_attributes', documented({ summary: "List a group's custom attributes", auth: 'admin', responses: { 200: 'CustomAttribute[]', ...REFUSED } }), async (c) => {
    const auth = await requireAdmin(c);
    const group = await userGroup(c, auth);
    const attributes = (await customAttributesOf(appContext(c).db, [group.row.id])).get(group.row.id) ?? [];
    return c.json(attributes.map(toCustomAttribute));
  })

  .get('/groups/:id/custom_attributes/:key', documented({ summary: "Get a group's custom attribute", auth: 'admin', responses: { 200: 'CustomAttribute', ...REFUSED } }), async (c) => {
    const auth = await requireAdmin(c);
    const group = await userGroup(c, auth);
    const attribute = await findGroupCustomAttribute(appContext(c).db, group.row.id, c.req.param('key'));
    if (!attribute) throw recordNotFound();
    return c.json(toCustomAttribute(attribute));
  })

  .put('/groups/:id/custom_attributes/:key', documented({ summary: "Set a group's custom attribute", params: valueParams, auth: 'admin', responses: { 200: 'CustomAttribute', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const p = await params(c, valueParams);
    const group = await userGroup(c, w.auth);
    const key = c.req.param('key');
    await run(w, groups, group.row.id, { type: 'SetGroupCustomAttribute', key, value: p.value });
    return c.json(toCustomAttribute({ key, value: p.value }));
  })

  .delete('/groups/:id/custom_attributes/:key', documented({ summary: "Delete a group's custom attribute", auth: 'admin', responses: { 204: null, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const group = await userGroup(c, w.auth);
    await run(w, groups, group.row.id, { type: 'DeleteGroupCustomAttribute', key: c.req.param('key') });
    return c.body(null, 204);
  });
