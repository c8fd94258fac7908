import { randomInt } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { recordNotFound } from '../../domain/errors.js';
import { environmentsQuery, findEnvironment } from '../../projections/environments/queries.js';
import { toEnvironment, toEnvironmentWithLastDeployment } from '../entities/environments.js';
import { presentProjectBasic } from '../entities/projects.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { declaration, optional, params, rawParams, required, t, type RawParams, declared } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { userProject, type ProjectScope, pathRow } from '../kernel/scope.js';
import { environments, type EnvironmentState } from '../../domain/environments.js';
import { create, run } from '../../commands/kernel/run.js';

const SUFFIX_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Environment#random_suffix: six characters out of a-z0-9. */
const slugSuffix = () => Array.from({ length: 6 }, () => SUFFIX_CHARS[randomInt(SUFFIX_CHARS.length)]).join('');

/** `optional :slug, absence: { message: … }`: the slug is never the caller's. */
const slugAbsence = (raw: RawParams) => (raw.slug === undefined ? undefined : 'slug is automatically generated and cannot be changed');

/** `requires :environment_id, type: Integer`. */
const ON_ENVIRONMENT = { pathIds: ['environment_id'] } as const;

/** `user_project.environments.find(params[:environment_id])`: another project's id is "404 Not found". */
const environmentOf = (c: Context, projectId: number) => pathRow(c, 'environment_id', (db, id) => findEnvironment(db, projectId, id), () => recordNotFound('Environment'));

/** A written environment, answered from the command's state: the inline projection wrote the same values. */
const fromState = (id: number, { environment }: EnvironmentState) => ({
  id,
  name: environment!.name,
  slug: environment!.slug,
  external_url: environment!.externalUrl,
  state: environment!.state,
});

/** The project as every environment of a response embeds it (Entities::BasicProjectDetails). */
function embedded(c: Context, project: ProjectScope) {
  const { db, config } = appContext(c);
  return presentProjectBasic(db, config, project);
}

const listShape = { name: optional(t.string()), search: optional(t.string()) };
const createShape = { name: required(t.string()), external_url: optional(t.string()) };
const updateShape = { name: optional(t.string()), external_url: optional(t.string()) };

/** GitLab's API::Environments: reporters read, developers write. */
export const environmentRoutes = new Hono<AppEnv>()
  .get('/projects/:id/environments', documented({ summary: 'List environments', params: listShape, responses: { 200: 'Environment[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    const filters = await params(c, listShape, { mutuallyExclusive: [{ params: ['name', 'search'], message: 'cannot be used together' }] });
    const project = await userProject(c, auth, 'read_environment');
    const rows = await paginate(c, environmentsQuery(appContext(c).db, project.row.id, filters), (q) => q.orderBy('id'));
    const basic = await embedded(c, project);
    return c.json(rows.map((row) => toEnvironment(row, basic)));
  })

  .get('/projects/:id/environments/:environment_id', documented({ summary: 'Get an environment', ...ON_ENVIRONMENT, responses: { 200: 'Environment', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_ENVIRONMENT);
    const project = await userProject(c, auth, 'read_environment');
    return c.json(toEnvironmentWithLastDeployment(await environmentOf(c, project.row.id)));
  })

  .post('/projects/:id/environments', documented({ summary: 'Create an environment', params: createShape, responses: { 201: 'Environment', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const { name, external_url } = p.parse(createShape);
    p.check(slugAbsence(raw));
    p.done();
    const project = await userProject(c, w.auth, 'create_environment');
    const { id, state } = await create(
      w,
      environments,
      () => ({ type: 'CreateEnvironment', projectId: project.row.id, name, externalUrl: external_url ?? null, slugSuffix: slugSuffix() }),
    );
    return c.json(toEnvironment(fromState(id, state), await embedded(c, project)), 201);
  })

  .put('/projects/:id/environments/:environment_id', documented({ summary: 'Update an environment', params: updateShape, ...ON_ENVIRONMENT, responses: { 200: 'Environment', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const { name, external_url } = await declared(c, updateShape, { ...ON_ENVIRONMENT, checks: [slugAbsence] });
    const project = await userProject(c, w.auth, 'update_environment');
    const environment = await environmentOf(c, project.row.id);
    const { state } = await run(w, environments, environment.id, { type: 'UpdateEnvironment', name, externalUrl: external_url });
    return c.json(toEnvironment(fromState(environment.id, state), await embedded(c, project)));
  })

  .delete('/projects/:id/environments/:environment_id', documented({ summary: 'Delete an environment', ...ON_ENVIRONMENT, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_ENVIRONMENT);
    // GitLab 12 asks update_environment here; destroy_environment is the same roles.
    const project = await userProject(c, w.auth, 'destroy_environment');
    const environment = await environmentOf(c, project.row.id);
    checkUnmodifiedSince(c, environment.updated_at);
    await run(w, environments, environment.id, { type: 'DeleteEnvironment' });
    return c.body(null, 204);
  })

  .post('/projects/:id/environments/:environment_id/stop', documented({ summary: 'Stop an environment', ...ON_ENVIRONMENT, responses: { 200: 'Environment', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_ENVIRONMENT);
    const project = await userProject(c, w.auth, 'stop_environment');
    const environment = await environmentOf(c, project.row.id);
    const { state } = await run(w, environments, environment.id, { type: 'StopEnvironment' });
    return c.json(toEnvironment(fromState(environment.id, state), await embedded(c, project)), 200);
  });
