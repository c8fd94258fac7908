import { Hono, type Context } from 'hono';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../database/database.js';
import type { ScopeInput } from '../../domain/feature-flags/decider.js';
import { effectiveScope } from '../../domain/feature-flags/matching.js';
import { DomainError, forbidden, recordNotFound } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import type { ProjectAbility } from '../../domain/policy/project.js';
import { featureFlagsQuery, findFeatureFlag, flagScopesQuery, projectScopes, scopesOf } from '../../projections/feature-flags/queries.js';
import type { FeatureFlagRow } from '../../projections/feature-flags/tables.js';
import { toDetailedFeatureFlagScope, toFeatureFlag, toFeatureFlagScope } from '../entities/feature-flags.js';
import { authenticate, writerFor } from '../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { fullMessages, rendersInvalid, routeNotFound } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { declaration, optional, params, parseParams, rawParams, required, t, type RawParams } from '../kernel/params.js';
import { pathNamed, userProject, type ProjectScope } from '../kernel/scope.js';
import { newId, run } from '../../commands/kernel/run.js';
import { featureFlags } from '../../domain/feature-flags/aggregate.js';

// ───────────────────────────── Parameters ─────────────────────────────

const isHash = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Grape's `type: JSON`: a JSON text (a form value) or the value itself (a JSON body), which
 * must be a hash or an array of hashes; anything else is "<param> is invalid".
 */
const JSON_PARAM = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return undefined;
    }
  },
  z.custom<unknown>((v) => isHash(v) || (Array.isArray(v) && v.every(isHash))),
);

const scopeShape = { environment_scope: required(t.string()), active: required(t.boolean()), strategies: required(JSON_PARAM) };
const listShape = { scope: optional(t.values(['enabled', 'disabled'])) };
// `active` on a flag is forgelog's (README, "Extensions beyond GitLab"); GitLab 12 always made it true.
const createShape = { name: required(t.string()), description: optional(t.string()), active: optional(t.boolean()) };
const updateShape = { name: optional(t.string()), description: optional(t.string()), active: optional(t.boolean()) };
const environmentShape = { environment: required(t.string()) };
// The spec and GitLab 12's documentation require both; GitLab's code had them optional.
const scopeUpdateShape = { active: required(t.boolean()), strategies: required(JSON_PARAM) };

const scopeInput = (p: { environment_scope: string; active: boolean; strategies: unknown }): ScopeInput => ({
  environmentScope: p.environment_scope,
  active: p.active,
  strategies: p.strategies,
});

/**
 * `optional :scopes, type: Array do requires … end`: an array of hashes, each element's
 * errors named under the array (`scopes[active] is missing`, Grape 1.1's form).
 */
function scopesParam(raw: RawParams, check: (message: string | undefined) => void): ScopeInput[] | null {
  const value = raw.scopes;
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every(isHash)) {
    check('scopes is invalid');
    return null;
  }
  const scopes: ScopeInput[] = [];
  for (const element of value) {
    try {
      scopes.push(scopeInput(parseParams(scopeShape, element)));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'invalid_params') throw error;
      for (const message of error.params ?? []) check(message.replace(/^(\S+)/, 'scopes[$1]'));
    }
  }
  return scopes;
}

// ───────────────────────────── Scope, flag, spec ─────────────────────────────

/**
 * GitLab EE's `before { authorize_read_feature_flags! }`: the project (404 unseen), then
 * read_feature_flag — developers — and the `feature_flags` licence (premium), both 403. CE
 * has no such routes.
 */
async function readableProject(c: Context): Promise<{ auth: Auth; project: ProjectScope }> {
  const { config } = appContext(c);
  if (!licensed(config.plan, 'ee')) throw routeNotFound();
  const auth = await authenticate(c);
  const project = await userProject(c, auth, 'read_feature_flag');
  if (!licensed(config.plan, 'feature_flags')) throw forbidden();
  return { auth, project };
}

/** `authorize! ability` after the parameters and the flag were found, as GitLab orders them. */
function authorize(project: ProjectScope, ability: ProjectAbility) {
  if (!project.can(ability)) throw forbidden();
}

/** `user_project.operations_feature_flags.find_by_name!(params[:name])`: "404 Not found". */
const flagOf = (c: Context, project: ProjectScope): Promise<FeatureFlagRow> =>
  pathNamed(c, 'name', (db, name) => findFeatureFlag(db, project.row.id, name), () => recordNotFound('FeatureFlag'));

/** `CGI.unescape(params[:environment_scope])`: the path segment decoded, a '+' a space. */
const environmentScopeOf = (c: Context) => (c.req.param('environment_scope') ?? '').replace(/\+/g, ' ');

async function presentFlag(db: Db, flag: FeatureFlagRow) {
  return toFeatureFlag(flag, (await scopesOf(db, [flag.id])).get(flag.id) ?? []);
}

async function presentScope(db: Db, flagId: number, environmentScope: string) {
  const row = await flagScopesQuery(db, flagId).where('environment_scope', '=', environmentScope).executeTakeFirst();
  if (!row) throw recordNotFound('FeatureFlagScope');
  return toFeatureFlagScope(row);
}

/** Ids for `count` new scopes, from their sequence in one statement. */
async function scopeIds(db: Db, count: number): Promise<number[]> {
  const { rows } = await sql<{ id: string }>`select nextval('feature_flag_scopes_id_seq') as id from generate_series(1, ${count})`.execute(db);
  return rows.map((row) => Number(row.id));
}

/** FeatureFlags::*Service answers a failed save with `render_api_error!(errors.full_messages, 400)`. */
const failedSave = rendersInvalid(fullMessages(400));

// ───────────────────────────── Routes ─────────────────────────────

/** GitLab EE's API::FeatureFlags and API::FeatureFlagScopes (12.5+): developers and above, premium. */
export const featureFlagRoutes = new Hono<AppEnv>()
  .get('/projects/:id/feature_flags', documented({ summary: "List a project's feature flags (EE)", params: listShape, responses: { 200: 'FeatureFlag[]', ...REFUSED } }), async (c) => {
    const { project } = await readableProject(c);
    const { scope } = await params(c, listShape);
    const { db } = appContext(c);
    const rows = await paginate(c, featureFlagsQuery(db, project.row.id, scope), (q) => q.orderBy('name').orderBy('id'));
    const scopes = await scopesOf(db, rows.map((row) => row.id));
    return c.json(rows.map((row) => toFeatureFlag(row, scopes.get(row.id) ?? [])));
  })

  .post('/projects/:id/feature_flags', documented({ summary: 'Create a feature flag (EE); scopes[] as in GitLab', params: createShape, responses: { 201: 'FeatureFlag', ...REFUSED } }), failedSave, async (c) => {
    const { auth, project } = await readableProject(c);
    const w = writerFor(c, auth);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const { name, description, active } = p.parse(createShape);
    const scopes = scopesParam(raw, (message) => p.check(message));
    p.done();
    authorize(project, 'create_feature_flag');
    const { db } = appContext(c);
    const id = await newId(w, featureFlags);
    const ids = await scopeIds(db, Math.max(1, scopes?.length ?? 0));
    await run(
      w,
      featureFlags,
      id,
      { type: 'CreateFeatureFlag', projectId: project.row.id, name, description: description ?? null, active: active ?? true, scopes, scopeIds: ids },
    );
    return c.json(await presentFlag(db, (await findFeatureFlag(db, project.row.id, name))!), 201);
  })

  .get('/projects/:id/feature_flag_scopes', documented({ summary: "A project's feature flag scopes effective in an environment (EE)", params: environmentShape, responses: { 200: 'DetailedFeatureFlagScope[]', ...REFUSED } }), async (c) => {
    const { project } = await readableProject(c);
    const { environment } = await params(c, environmentShape);
    // for_unleash_client: per flag (newest first), the scope in effect for the environment.
    const rows = await projectScopes(appContext(c).db, project.row.id);
    const byFlag = new Map<number, typeof rows>();
    for (const row of rows) (byFlag.get(row.feature_flag_id) ?? byFlag.set(row.feature_flag_id, []).get(row.feature_flag_id)!).push(row);
    const effective = [...byFlag.values()].flatMap((scopes) => {
      const scope = effectiveScope(scopes, environment);
      return scope ? [toDetailedFeatureFlagScope(scope)] : [];
    });
    return c.json(effective);
  })

  .get('/projects/:id/feature_flags/:name', documented({ summary: 'Get a feature flag (EE)', responses: { 200: 'FeatureFlag', ...REFUSED } }), async (c) => {
    const { project } = await readableProject(c);
    return c.json(await presentFlag(appContext(c).db, await flagOf(c, project)));
  })

  // Not in GitLab 12 (README, "Extensions beyond GitLab"): FeatureFlags::UpdateService's name, description, active.
  .put('/projects/:id/feature_flags/:name', documented({ summary: 'Update a feature flag (EE)', params: updateShape, responses: { 200: 'FeatureFlag', ...REFUSED } }), failedSave, async (c) => {
    const { auth, project } = await readableProject(c);
    const w = writerFor(c, auth);
    const { name, description, active } = await params(c, updateShape);
    const flag = await flagOf(c, project);
    authorize(project, 'update_feature_flag');
    const { db } = appContext(c);
    await run(w, featureFlags, flag.id, { type: 'UpdateFeatureFlag', name, description, active });
    return c.json(await presentFlag(db, (await findFeatureFlag(db, project.row.id, name ?? flag.name))!));
  })

  .delete('/projects/:id/feature_flags/:name', documented({ summary: 'Delete a feature flag (EE): the flag as it was', responses: { 200: 'FeatureFlag', ...REFUSED } }), async (c) => {
    const { auth, project } = await readableProject(c);
    const w = writerFor(c, auth);
    const flag = await flagOf(c, project);
    authorize(project, 'destroy_feature_flag');
    const { db } = appContext(c);
    // GitLab presents the destroyed flag (200); here with the scopes it had.
    const presented = await presentFlag(db, flag);
    await run(w, featureFlags, flag.id, { type: 'DeleteFeatureFlag' });
    return c.json(presented);
  })

  .get('/projects/:id/feature_flags/:name/scopes', documented({ summary: "List a feature flag's scopes (EE)", responses: { 200: 'FeatureFlagScope[]', ...REFUSED } }), async (c) => {
    const { project } = await readableProject(c);
    const { db } = appContext(c);
    const flag = await flagOf(c, project);
    const rows = await paginate(c, flagScopesQuery(db, flag.id), (q) => q.orderBy('id'));
    return c.json(rows.map(toFeatureFlagScope));
  })

  .post('/projects/:id/feature_flags/:name/scopes', documented({ summary: 'Add a scope to a feature flag (EE)', params: scopeShape, responses: { 201: 'FeatureFlagScope', ...REFUSED } }), failedSave, async (c) => {
    const { auth, project } = await readableProject(c);
    const w = writerFor(c, auth);
    const p = await params(c, scopeShape);
    const flag = await flagOf(c, project);
    authorize(project, 'update_feature_flag');
    const { db } = appContext(c);
    const [scopeId] = await scopeIds(db, 1);
    const result = await run(w, featureFlags, flag.id, { type: 'CreateFeatureFlagScope', scopeId: scopeId!, scope: scopeInput(p) });
    const created = result.state.flag!.scopes.find((s) => s.id === scopeId)!;
    return c.json(await presentScope(db, flag.id, created.environment_scope), 201);
  })

  .get('/projects/:id/feature_flags/:name/scopes/:environment_scope', documented({ summary: 'Get a feature flag scope (EE)', responses: { 200: 'FeatureFlagScope', ...REFUSED } }), async (c) => {
    const { project } = await readableProject(c);
    const flag = await flagOf(c, project);
    return c.json(await presentScope(appContext(c).db, flag.id, environmentScopeOf(c)));
  })

  .put('/projects/:id/feature_flags/:name/scopes/:environment_scope', documented({ summary: 'Update a feature flag scope (EE)', params: scopeUpdateShape, responses: { 200: 'FeatureFlagScope', ...REFUSED } }), failedSave, async (c) => {
    const { auth, project } = await readableProject(c);
    const w = writerFor(c, auth);
    const { active, strategies } = await params(c, scopeUpdateShape);
    const flag = await flagOf(c, project);
    authorize(project, 'update_feature_flag');
    const environmentScope = environmentScopeOf(c);
    const { db } = appContext(c);
    await run(w, featureFlags, flag.id, { type: 'UpdateFeatureFlagScope', environmentScope, active, strategies });
    return c.json(await presentScope(db, flag.id, environmentScope));
  })

  .delete('/projects/:id/feature_flags/:name/scopes/:environment_scope', documented({ summary: 'Delete a feature flag scope (EE)', responses: { 204: null, ...REFUSED } }), failedSave, async (c) => {
    const { auth, project } = await readableProject(c);
    const w = writerFor(c, auth);
    const flag = await flagOf(c, project);
    authorize(project, 'update_feature_flag');
    await run(w, featureFlags, flag.id, { type: 'DeleteFeatureFlagScope', environmentScope: environmentScopeOf(c) });
    return c.body(null, 204);
  });
