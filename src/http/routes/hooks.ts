import { Hono, type Context } from 'hono';
import { createHook, deleteHook, updateHook, type HookInput } from '../../commands/hooks.js';
import { recordSystemHookTest, SYSTEM_HOOK_TEST_DATA } from '../../commands/hook-deliveries.js';
import { recordNotFound, notFound } from '../../domain/errors.js';
import type { HookFlag, HookKind } from '../../domain/hooks/decider.js';
import { licensed } from '../../domain/policy/licensed.js';
import { findHook, hooksOf } from '../../projections/hooks/queries.js';
import type { HookRow } from '../../projections/hooks/tables.js';
import { toGroupHook, toHook, toProjectHook } from '../entities/hooks.js';
import { requireAdmin, requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { rendersInvalid, routeNotFound, rubyHashInspect, type InvalidRendering } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { declared, optional, params, required, t, type Shape } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { pathRow, userGroup, userProject } from '../kernel/scope.js';

/**
 * GitLab 12.10's API::ProjectHooks, EE's API::GroupHooks (licensed `group_webhooks`) and
 * API::SystemHooks. Project and group hooks are `before { authenticate! }` and the scope's
 * admin ability (maintainers of the project, owners of the group) before any parameter is
 * looked at; system hooks are for administrators. The token is write-only.
 */

const bool = () => optional(t.boolean());

/** `params :project_hook_properties` (12.10). */
const PROJECT_HOOK: Shape = {
  url: required(t.string()),
  push_events: bool(),
  issues_events: bool(),
  confidential_issues_events: bool(),
  merge_requests_events: bool(),
  tag_push_events: bool(),
  note_events: bool(),
  confidential_note_events: bool(),
  job_events: bool(),
  pipeline_events: bool(),
  wiki_page_events: bool(),
  enable_ssl_verification: bool(),
  token: optional(t.string()),
  push_events_branch_filter: optional(t.string()),
};

/** EE's `params :group_hook_properties` (12.10): the project's without the branch filter. */
const { push_events_branch_filter: _filter, ...GROUP_HOOK } = PROJECT_HOOK;

/** POST /hooks (12.10). */
const SYSTEM_HOOK: Shape = {
  url: required(t.string()),
  token: optional(t.string()),
  push_events: bool(),
  tag_push_events: bool(),
  merge_requests_events: bool(),
  repository_update_events: bool(),
  enable_ssl_verification: bool(),
};

function inputOf(parsed: Record<string, unknown>): HookInput {
  const flags: Partial<Record<HookFlag, boolean>> = {};
  for (const [name, value] of Object.entries(parsed)) if (name.endsWith('_events') && typeof value === 'boolean') flags[name as HookFlag] = value;
  const { url, token, enable_ssl_verification: ssl, push_events_branch_filter: filter } = parsed as Record<string, string | boolean | undefined>;
  return {
    ...(typeof url === 'string' ? { url } : {}),
    flags,
    ...(typeof filter === 'string' ? { pushEventsBranchFilter: filter } : {}),
    ...(typeof ssl === 'boolean' ? { enableSslVerification: ssl } : {}),
    ...(typeof token === 'string' ? { token } : {}),
  };
}

/**
 * A failed save of a project or group hook: `error!("Invalid url given", 422)`, then (projects)
 * `error!("Invalid branch filter given", 422)`, else `not_found!("Project hook #{errors.messages}")`.
 */
const failedSave = (model: string, branchFilter: boolean): InvalidRendering => (fields) => {
  if (fields.url) return { status: 422, body: { error: 'Invalid url given' } };
  if (branchFilter && fields.push_events_branch_filter) return { status: 422, body: { error: 'Invalid branch filter given' } };
  return { status: 404, body: { message: `404 ${model} ${rubyHashInspect(fields)} Not Found` } };
};

interface OwnerSpec {
  readonly kind: Exclude<HookKind, 'system'>;
  readonly path: string;
  readonly shape: Shape;
  readonly present: (row: HookRow) => Record<string, unknown>;
  readonly rendering: InvalidRendering;
  /** The scope's row id, the caller holding its admin ability (404 hidden, 403 without it). */
  readonly scope: (c: Context, auth: Awaited<ReturnType<typeof requireUser>>) => Promise<number>;
}

const ON_HOOK = { pathIds: ['hook_id'] } as const;

/** `<scope>.hooks.find(params[:hook_id])`: "404 Not found". */
const hookOf = (c: Context, kind: HookKind, ownerId: number | null, param = 'hook_id') =>
  pathRow(c, param, (db, id) => findHook(db, kind, ownerId, id), () => recordNotFound('Hook'));

const owners = (kind: HookKind, id: number) => ({ kind, projectId: kind === 'project' ? id : null, groupId: kind === 'group' ? id : null });

function ownerRoutes(spec: OwnerSpec) {
  const base = `/${spec.path}/:id/hooks`;
  const saving = rendersInvalid(spec.rendering);
  const of = spec.kind === 'project' ? 'a project' : 'a group';
  const entity = spec.kind === 'project' ? 'ProjectHook' : 'GroupHook';
  return new Hono<AppEnv>()
    .get(base, documented({ summary: `List the hooks of ${of}`, responses: { 200: `${entity}[]`, ...REFUSED } }), async (c) => {
      const auth = await requireUser(c);
      const ownerId = await spec.scope(c, auth);
      await params(c, {});
      const rows = await paginate(c, hooksOf(appContext(c).db, spec.kind, ownerId), (q) => q.orderBy('id'));
      return c.json(rows.map(spec.present));
    })
    .get(`${base}/:hook_id`, documented({ summary: `Get a hook of ${of}`, ...ON_HOOK, responses: { 200: entity, ...REFUSED } }), async (c) => {
      const auth = await requireUser(c);
      const ownerId = await spec.scope(c, auth);
      await declared(c, {}, ON_HOOK);
      return c.json(spec.present(await hookOf(c, spec.kind, ownerId)));
    })
    .post(base, documented({ summary: `Add a hook to ${of}`, params: spec.shape, responses: { 201: entity, ...REFUSED } }), saving, async (c) => {
      const w = await requireWriter(c);
      const ownerId = await spec.scope(c, w.auth);
      const input = inputOf(await declared(c, spec.shape));
      const { id } = await createHook(w, owners(spec.kind, ownerId), input);
      return c.json(spec.present((await findHook(appContext(c).db, spec.kind, ownerId, id))!), 201);
    })
    .put(`${base}/:hook_id`, documented({ summary: `Edit a hook of ${of}`, params: spec.shape, ...ON_HOOK, responses: { 200: entity, ...REFUSED } }), saving, async (c) => {
      const w = await requireWriter(c);
      const ownerId = await spec.scope(c, w.auth);
      const input = inputOf(await declared(c, spec.shape, ON_HOOK));
      const hook = await hookOf(c, spec.kind, ownerId);
      await updateHook(w, hook, input);
      return c.json(spec.present((await findHook(appContext(c).db, spec.kind, ownerId, hook.id))!));
    })
    .delete(`${base}/:hook_id`, documented({ summary: `Delete a hook of ${of}`, ...ON_HOOK, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
      const w = await requireWriter(c);
      const ownerId = await spec.scope(c, w.auth);
      await declared(c, {}, ON_HOOK);
      const hook = await hookOf(c, spec.kind, ownerId);
      checkUnmodifiedSince(c, hook.updated_at);
      await deleteHook(w, hook.id);
      return c.body(null, 204);
    });
}

const projectHooks = ownerRoutes({
  kind: 'project',
  path: 'projects',
  shape: PROJECT_HOOK,
  present: toProjectHook,
  rendering: failedSave('Project hook', true),
  scope: async (c, auth) => (await userProject(c, auth, 'admin_project')).row.id,
});

const groupHooks = ownerRoutes({
  kind: 'group',
  path: 'groups',
  shape: GROUP_HOOK,
  present: toGroupHook,
  rendering: failedSave('Group hook', false),
  scope: async (c, auth) => (await userGroup(c, auth, 'admin_group')).row.id,
});

/** CE has no /groups/:id/hooks: without the licence no route matches. */
const licensedGroupHooks = new Hono<AppEnv>()
  .use('/groups/:id/hooks', async (c, next) => {
    if (!licensed(appContext(c).config.plan, 'group_webhooks')) throw routeNotFound();
    await next();
  })
  .use('/groups/:id/hooks/*', async (c, next) => {
    if (!licensed(appContext(c).config.plan, 'group_webhooks')) throw routeNotFound();
    await next();
  })
  .route('/', groupHooks);

const ON_SYSTEM_HOOK = { pathIds: ['id'] } as const;

/** API::SystemHooks (12.10): list, create, test (GET /hooks/:id), delete — administrators only. */
const systemHooks = new Hono<AppEnv>()
  .get('/hooks', documented({ summary: 'List system hooks', auth: 'admin', responses: { 200: 'Hook[]', 403: 'Error' } }), async (c) => {
    await requireAdmin(c);
    await params(c, {});
    return c.json((await paginate(c, hooksOf(appContext(c).db, 'system', null), (q) => q.orderBy('id'))).map(toHook));
  })
  .post('/hooks', documented({ summary: 'Add a system hook', params: SYSTEM_HOOK, auth: 'admin', responses: { 201: 'Hook', 403: 'Error' } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const input = inputOf(await declared(c, SYSTEM_HOOK));
    const { id } = await createHook(w, owners('system', 0), input);
    return c.json(toHook((await findHook(appContext(c).db, 'system', null, id))!), 201);
  })
  // GitLab 12.10: `get ":id"` executes the hook with a sample project_create event and answers that data.
  .get('/hooks/:id', documented({ summary: 'Test a system hook: answers the sample event it sent', ...ON_SYSTEM_HOOK, auth: 'admin', responses: { 200: { type: 'object' }, ...REFUSED } }), async (c) => {
    await requireAdmin(c);
    await declared(c, {}, ON_SYSTEM_HOOK);
    const hook = await hookOf(c, 'system', null, 'id');
    await recordSystemHookTest(appContext(c).commands, hook);
    return c.json(SYSTEM_HOOK_TEST_DATA);
  })
  .delete('/hooks/:id', documented({ summary: 'Delete a system hook', ...ON_SYSTEM_HOOK, auth: 'admin', responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    await declared(c, {}, ON_SYSTEM_HOOK);
    // `SystemHook.find_by(id:)` then `not_found!('System hook')`.
    const hook = await pathRow(c, 'id', (db, id) => findHook(db, 'system', null, id), () => notFound('System hook'));
    checkUnmodifiedSince(c, hook.updated_at);
    await deleteHook(w, hook.id);
    return c.body(null, 204);
  });

export const hookRoutes = new Hono<AppEnv>().route('/', projectHooks).route('/', licensedGroupHooks).route('/', systemHooks);
