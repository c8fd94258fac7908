import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const DEFAULT = [{ name: 'default', parameters: {} }];
const USERS = [{ name: 'userWithId', parameters: { userIds: 'a,b,c' } }];
const SCOPE_KEYS = ['id', 'active', 'environment_scope', 'strategies', 'created_at', 'updated_at'];
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const flags = (projectId: number) => `/projects/${projectId}/feature_flags`;
const scopes = (projectId: number, name: string) => `${flags(projectId)}/${name}/scopes`;
const createFlag = async (projectId: number, body: Record<string, unknown>) => {
  const res = await api.post(flags(projectId), body);
  if (res.status !== 201) throw new Error(`POST feature_flags: ${res.status} ${res.text}`);
  return res.body;
};
const addScope = async (projectId: number, name: string, environment_scope: string, active: boolean, strategies: unknown = DEFAULT) => {
  const res = await api.post(scopes(projectId, name), { environment_scope, active, strategies });
  if (res.status !== 201) throw new Error(`POST scopes: ${res.status} ${res.text}`);
  return res.body;
};
const rowCount = async (projectId: number) =>
  Number((await sql<{ n: string }>`select count(*) as n from feature_flags where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);
const flagEvents = async (projectId: number) =>
  (await sql<{ event_type: string }>`select event_type from events where project_id = ${projectId} and stream_id like 'feature-flag-%' order by global_position`.execute(api.handle.db)).rows.map(
    (r) => r.event_type,
  );

describe('POST /projects/:id/feature_flags', () => {
  it('creates a flag with the * scope, active, default strategy (201), and appends FeatureFlagCreated', async () => {
    const project = await createProject(api);
    const res = await api.post(flags(project.id), { name: 'awesome-feature', description: 'it is' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['name', 'description', 'created_at', 'updated_at', 'scopes']);
    expect(res.body).toMatchObject({ name: 'awesome-feature', description: 'it is', scopes: [{ active: true, environment_scope: '*', strategies: DEFAULT }] });
    expect(res.body.created_at).toMatch(TIME);
    expect(Object.keys(res.body.scopes[0])).toEqual(SCOPE_KEYS);
    expect(await flagEvents(project.id)).toEqual(['FeatureFlagCreated']);
    expect((await api.get(`${flags(project.id)}/awesome-feature`)).body).toEqual(res.body);
  });

  it('takes scopes, strategies as a JSON array or as JSON text (form), * first', async () => {
    const project = await createProject(api);
    const res = await api.post(flags(project.id), {
      name: 'two',
      scopes: [
        { environment_scope: '*', active: false, strategies: JSON.stringify(DEFAULT) },
        { environment_scope: 'production', active: 'true', strategies: USERS },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.description).toBeNull();
    expect(res.body.scopes.map((s: any) => [s.environment_scope, s.active, s.strategies])).toEqual([
      ['*', false, DEFAULT],
      ['production', true, USERS],
    ]);
    expect(res.body.scopes[1].id).toBeGreaterThan(res.body.scopes[0].id);
    // `active` on a flag (forgelog's extension): the * scope built for it follows.
    const inactive = await api.request('POST', flags(project.id), { form: { name: 'off', active: 'false' } });
    expect(inactive).toMatchObject({ status: 201, body: { scopes: [{ environment_scope: '*', active: false }] } });
  });

  it("answers Grape's parameter errors, then the model's full messages, and writes nothing then", async () => {
    const project = await createProject(api);
    expect(await api.post(flags(project.id), {})).toMatchObject({ status: 400, body: { error: 'name is missing' } });
    expect(await api.post(flags(project.id), { name: 'x', scopes: [{ environment_scope: '*' }] })).toMatchObject({
      status: 400,
      body: { error: 'scopes[active] is missing, scopes[strategies] is missing' },
    });
    expect(await api.post(flags(project.id), { name: 'x', scopes: 'nope' })).toMatchObject({ status: 400, body: { error: 'scopes is invalid' } });
    expect(await api.post(flags(project.id), { name: 'x', scopes: [{ environment_scope: '*', active: true, strategies: '[{' }] })).toMatchObject({
      status: 400,
      body: { error: 'scopes[strategies] is invalid' },
    });
    expect(await api.post(flags(project.id), { name: 'Bad_' })).toMatchObject({
      status: 400,
      body: { message: ["Name can contain only lowercase letters, digits, '_' and '-'. Must start with a letter, and cannot end with '-' or '_'"] },
    });
    expect(await api.post(flags(project.id), { name: 'ok', scopes: [{ environment_scope: 'production', active: true, strategies: [{ name: 'default', parameters: { a: 1 } }] }] })).toMatchObject({
      status: 400,
      body: { message: ['Default scope has to be the first element', 'Scopes strategies parameters are invalid'] },
    });
    expect(await rowCount(project.id)).toBe(0);
    await createFlag(project.id, { name: 'taken' });
    expect(await api.post(flags(project.id), { name: 'taken' })).toMatchObject({ status: 400, body: { message: ['Name has already been taken'] } });
    expect(await rowCount(project.id)).toBe(1);
    // Names are unique within a project only.
    expect((await api.post(flags((await createProject(api)).id), { name: 'taken' })).status).toBe(201);
  });
});

describe('GET /projects/:id/feature_flags', () => {
  let projectId: number;
  beforeAll(async () => {
    projectId = (await createProject(api)).id;
    for (const name of ['charlie', 'alpha', 'bravo']) await createFlag(projectId, { name });
    await api.put(`${scopes(projectId, 'bravo')}/*`, { active: false, strategies: DEFAULT });
  });

  it('lists by name, paginated, each with its scopes', async () => {
    const res = await api.get(flags(projectId), { query: { per_page: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.map((f: any) => f.name)).toEqual(['alpha', 'bravo']);
    expect(res.headers.get('x-total')).toBe('3');
    expect(res.body[1].scopes).toMatchObject([{ environment_scope: '*', active: false }]);
  });

  it('filters enabled (an active scope) and disabled (none)', async () => {
    expect((await api.get(flags(projectId), { query: { scope: 'enabled' } })).body.map((f: any) => f.name)).toEqual(['alpha', 'charlie']);
    expect((await api.get(flags(projectId), { query: { scope: 'disabled' } })).body.map((f: any) => f.name)).toEqual(['bravo']);
    expect(await api.get(flags(projectId), { query: { scope: 'all' } })).toMatchObject({ status: 400, body: { error: 'scope does not have a valid value' } });
  });
});

describe('GET /projects/:id/feature_flags/:name', () => {
  it('answers 404 Not found for an unknown name or another project’s flag', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    await createFlag(other.id, { name: 'theirs' });
    for (const name of ['theirs', 'nope']) expect(await api.get(`${flags(project.id)}/${name}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('PUT /projects/:id/feature_flags/:name (forgelog extension)', () => {
  it('renames, describes, and turns the flag and its * scope off; nothing changed appends nothing', async () => {
    const project = await createProject(api);
    await createFlag(project.id, { name: 'one', scopes: [{ environment_scope: '*', active: true, strategies: DEFAULT }, { environment_scope: 'staging', active: true, strategies: DEFAULT }] });
    const res = await api.put(`${flags(project.id)}/one`, { name: 'two', description: 'd', active: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'two', description: 'd', scopes: [{ environment_scope: '*', active: false }, { environment_scope: 'staging', active: true }] });
    expect((await api.get(`${flags(project.id)}/one`)).status).toBe(404);
    expect((await api.put(`${flags(project.id)}/two`, { name: 'two' })).status).toBe(200);
    expect(await flagEvents(project.id)).toEqual(['FeatureFlagCreated', 'FeatureFlagUpdated']);
    await createFlag(project.id, { name: 'one' });
    expect(await api.put(`${flags(project.id)}/one`, { name: 'two' })).toMatchObject({ status: 400, body: { message: ['Name has already been taken'] } });
  });
});

describe('DELETE /projects/:id/feature_flags/:name', () => {
  it('deletes (200 with the flag as it was), frees the name', async () => {
    const project = await createProject(api);
    const flag = await createFlag(project.id, { name: 'gone' });
    const res = await api.del(`${flags(project.id)}/gone`);
    expect(res).toMatchObject({ status: 200, body: flag });
    expect(await api.get(`${flags(project.id)}/gone`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.del(`${flags(project.id)}/gone`)).toMatchObject({ status: 404 });
    expect(await rowCount(project.id)).toBe(0);
    expect((await api.post(flags(project.id), { name: 'gone' })).status).toBe(201);
  });

  it("goes with its project's deletion", async () => {
    const project = await createProject(api);
    await createFlag(project.id, { name: 'xx' });
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    await eventually(async () => ((await rowCount(project.id)) === 0 ? true : undefined));
  });
});

// ───────────────────────────── Specs (scopes) ─────────────────────────────

describe('feature flag specs', () => {
  let projectId: number;
  beforeAll(async () => {
    projectId = (await createProject(api)).id;
    await createFlag(projectId, { name: 'flag' });
  });

  it('POST …/scopes creates one (201); a taken scope or bad strategies are the model’s messages', async () => {
    const res = await api.post(scopes(projectId, 'flag'), { environment_scope: 'staging', active: true, strategies: JSON.stringify(USERS) });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(SCOPE_KEYS);
    expect(res.body).toMatchObject({ environment_scope: 'staging', active: true, strategies: USERS });
    expect(await api.post(scopes(projectId, 'flag'), { environment_scope: ' staging ', active: true, strategies: DEFAULT })).toMatchObject({
      status: 400,
      body: { message: ['Scopes environment scope (staging) has already been taken'] },
    });
    expect(await api.post(scopes(projectId, 'flag'), { environment_scope: 'a!', active: true, strategies: [{ name: 'gradualRolloutUserId', parameters: { groupId: 'x', percentage: '101' } }] })).toMatchObject({
      status: 400,
      body: {
        message: [
          "Scopes environment scope can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces",
          'Scopes strategies percentage must be a string between 0 and 100 inclusive',
        ],
      },
    });
    expect(await api.post(scopes(projectId, 'flag'), { environment_scope: 'x' })).toMatchObject({ status: 400, body: { error: 'active is missing, strategies is missing' } });
    expect(await api.post(scopes(projectId, 'flag'), { environment_scope: 'x', active: true, strategies: [1, 2] })).toMatchObject({ status: 400, body: { error: 'strategies is invalid' } });
    expect(await api.post(scopes(projectId, 'nope'), { environment_scope: 'x', active: true, strategies: DEFAULT })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('GET …/scopes lists them by id; GET …/scopes/:environment_scope needs the scope URL-encoded', async () => {
    await addScope(projectId, 'flag', 'review/*', false);
    const list = await api.get(scopes(projectId, 'flag'));
    expect(list.status).toBe(200);
    expect(list.body.map((s: any) => s.environment_scope)).toEqual(['*', 'staging', 'review/*']);
    expect(list.headers.get('x-total')).toBe('3');
    expect(await api.get(`${scopes(projectId, 'flag')}/${encodeURIComponent('review/*')}`)).toMatchObject({ status: 200, body: list.body[2] });
    expect(await api.get(`${scopes(projectId, 'flag')}/review/*`)).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
    expect(await api.get(`${scopes(projectId, 'flag')}/production`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('PUT …/scopes/:environment_scope updates active and strategies (both required)', async () => {
    const path = `${scopes(projectId, 'flag')}/${encodeURIComponent('review/*')}`;
    const res = await api.put(path, { active: true, strategies: [{ name: 'gradualRolloutUserId', parameters: { groupId: 'default', percentage: '50' } }] });
    expect(res).toMatchObject({ status: 200, body: { environment_scope: 'review/*', active: true, strategies: [{ name: 'gradualRolloutUserId', parameters: { groupId: 'default', percentage: '50' } }] } });
    expect(await api.put(path, { active: false })).toMatchObject({ status: 400, body: { error: 'strategies is missing' } });
    expect(await api.put(path, { active: true, strategies: { name: 'default', parameters: {} } })).toMatchObject({
      status: 400,
      body: { message: ['Scopes strategies must be an array of strategy hashes'] },
    });
    expect(await api.put(`${scopes(projectId, 'flag')}/production`, { active: true, strategies: DEFAULT })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('DELETE …/scopes/:environment_scope removes it (204), never *', async () => {
    await addScope(projectId, 'flag', 'temp', true);
    const res = await api.del(`${scopes(projectId, 'flag')}/temp`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await api.get(`${scopes(projectId, 'flag')}/temp`)).toMatchObject({ status: 404 });
    expect(await api.del(`${scopes(projectId, 'flag')}/*`)).toMatchObject({ status: 400, body: { message: ['default scope cannot be destroyed'] } });
    expect(await api.del(`${scopes(projectId, 'flag')}/temp`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('GET /projects/:id/feature_flag_scopes', () => {
  let projectId: number;
  beforeAll(async () => {
    // GitLab's own example (ee/spec/requests/api/feature_flag_scopes_spec.rb).
    projectId = (await createProject(api)).id;
    await createFlag(projectId, { name: 'flag_1' });
    await createFlag(projectId, { name: 'flag_2' });
    await addScope(projectId, 'flag_1', 'staging', false);
    await addScope(projectId, 'flag_1', 'production', true, USERS);
    await addScope(projectId, 'flag_2', 'review/*', false);
  });

  const effective = async (environment: string) => {
    const res = await api.get(`/projects/${projectId}/feature_flag_scopes`, { query: { environment } });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('answers per flag, newest first, the scope in effect with the flag’s name', async () => {
    const production = await effective('production');
    expect(production.map((s: any) => [s.name, s.environment_scope, s.active])).toEqual([
      ['flag_2', '*', true],
      ['flag_1', 'production', true],
    ]);
    expect(Object.keys(production[1])).toEqual([...SCOPE_KEYS, 'name']);
    expect(production[1].strategies).toEqual(USERS);
    expect((await effective('staging')).map((s: any) => [s.name, s.active])).toEqual([
      ['flag_2', true],
      ['flag_1', false],
    ]);
    expect((await effective('review/feature X')).map((s: any) => [s.name, s.environment_scope, s.active])).toEqual([
      ['flag_2', 'review/*', false],
      ['flag_1', '*', true],
    ]);
  });

  it("is the flag's `active` and the scope's together", async () => {
    const project = await createProject(api);
    await createFlag(project.id, { name: 'off', scopes: [{ environment_scope: '*', active: true, strategies: DEFAULT }, { environment_scope: 'prod', active: true, strategies: DEFAULT }] });
    await api.put(`${flags(project.id)}/off`, { active: false });
    const res = await api.get(`/projects/${project.id}/feature_flag_scopes`, { query: { environment: 'prod' } });
    expect(res.body).toMatchObject([{ name: 'off', environment_scope: 'prod', active: false }]);
  });

  it('requires environment', async () => {
    expect(await api.get(`/projects/${projectId}/feature_flag_scopes`)).toMatchObject({ status: 400, body: { error: 'environment is missing' } });
  });

  it('matches a pattern with many * in time linear in the environment: no backtracking (the request would not return otherwise)', async () => {
    const project = await createProject(api);
    const pattern = `${'*a'.repeat(20)}*b`;
    await createFlag(project.id, { name: 'starry', scopes: [{ environment_scope: '*', active: false, strategies: DEFAULT }, { environment_scope: pattern, active: true, strategies: DEFAULT }] });
    const miss = await api.get(`/projects/${project.id}/feature_flag_scopes`, { query: { environment: 'a'.repeat(2_000) } });
    expect(miss).toMatchObject({ status: 200, body: [{ name: 'starry', environment_scope: '*' }] });
    const hit = await api.get(`/projects/${project.id}/feature_flag_scopes`, { query: { environment: `${'a'.repeat(2_000)}b` } });
    expect(hit).toMatchObject({ status: 200, body: [{ name: 'starry', environment_scope: pattern }] });
  });
});

describe('audit events', () => {
  it("records GitLab's custom messages for the project, the flag as target", async () => {
    const project = await createProject(api);
    await createFlag(project.id, { name: 'audited' });
    await addScope(project.id, 'audited', 'staging', true);
    const res = await api.get('/audit_events', { query: { entity_type: 'Project', entity_id: project.id } });
    expect(res.status).toBe(200);
    const messages = res.body.filter((e: any) => e.details.target_type === 'Operations::FeatureFlag').map((e: any) => e.details.custom_message);
    expect(messages).toEqual([
      'Updated feature flag <strong>audited</strong>. Created rule <strong>staging</strong> and set it as <strong>active</strong> with strategies <strong>[{"name"=>"default", "parameters"=>{}}]</strong>.',
      'Created feature flag <strong>audited</strong> with description <strong>""</strong>. Created rule <strong>*</strong> and set it as <strong>active</strong> with strategies <strong>[{"name"=>"default", "parameters"=>{}}]</strong>.',
    ]);
    expect(res.body[0].details).toMatchObject({ target_details: 'audited', target_type: 'Operations::FeatureFlag' });
  });
});

// ───────────────────────────── Plans, project features ─────────────────────────────

describe('the feature_flags licence (premium)', () => {
  it('answers 404 route-not-found on free (GitLab CE has no such route), 403 on starter, and works from premium', async () => {
    const project = await createProject(api);
    await createFlag(project.id, { name: 'planned' });
    const calls = [
      () => api.get(flags(project.id)),
      () => api.get(`${flags(project.id)}/planned`),
      () => api.get(`/projects/${project.id}/feature_flag_scopes`, { query: { environment: 'x' } }),
      () => api.post(scopes(project.id, 'planned'), { environment_scope: 'x', active: true, strategies: DEFAULT }),
    ];
    for (const call of calls) {
      expect(await onPlan(api, 'free', call)).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
      expect(await onPlan(api, 'starter', call)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    }
    expect((await onPlan(api, 'premium', () => api.get(flags(project.id)))).status).toBe(200);
    // A private project of others stays hidden on starter: 404 before the licence's 403.
    const stranger = await api.createUser();
    expect(await onPlan(api, 'starter', () => api.get(flags(project.id), { token: stranger.token }))).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

describe('project features', () => {
  it('makes flags read-only on an archived project, and off without the repository', async () => {
    const project = await createProject(api);
    await createFlag(project.id, { name: 'kept' });
    expect((await api.post(`/projects/${project.id}/archive`)).status).toBe(201);
    expect((await api.get(`${flags(project.id)}/kept`)).status).toBe(200);
    expect(await api.post(flags(project.id), { name: 'new' })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await api.del(`${flags(project.id)}/kept`)).status).toBe(403);
    const other = await createProject(api);
    expect((await api.put(`/projects/${other.id}`, { repository_access_level: 'disabled' })).status).toBe(200);
    expect((await api.get(flags(other.id))).status).toBe(403);
  });
});

describe('hostile input', () => {
  it('answers 4xx, never 500', async () => {
    const project = await createProject(api);
    await createFlag(project.id, { name: 'hh' });
    expect((await api.post(flags(project.id), { name: 'x'.repeat(5000) })).status).toBe(400);
    expect((await api.post(flags(project.id), { name: 'é' })).status).toBe(400);
    expect((await api.post(flags(project.id), { name: ['a', 'b'] })).status).toBe(400);
    expect((await api.post(scopes(project.id, 'hh'), { environment_scope: 'x'.repeat(5000), active: true, strategies: DEFAULT })).body).toEqual({
      message: ['Scopes environment scope is too long (maximum is 255 characters)'],
    });
    expect((await api.post(scopes(project.id, 'hh'), { environment_scope: 'y', active: 'maybe', strategies: DEFAULT })).body).toEqual({ error: 'active is invalid' });
    expect((await api.post(scopes(project.id, 'hh'), { environment_scope: 'y', active: true, strategies: '' })).body).toEqual({ error: 'strategies is invalid' });
    const deep = [{ name: 'userWithId', parameters: { userIds: { a: { b: { c: 1 } } } } }];
    expect((await api.post(scopes(project.id, 'hh'), { environment_scope: 'y', active: true, strategies: deep })).status).toBe(400);
    expect((await api.get(`/projects/${project.id}/feature_flag_scopes`, { query: { environment: "%_'\\\u0000x" } })).status).toBeLessThan(500);
    expect((await api.get(`/projects/${project.id}/feature_flag_scopes`, { query: { environment: '(.*)+$' } })).status).toBe(200);
    expect((await api.get(`${scopes(project.id, 'hh')}/%E0%A4%A`)).status).toBeLessThan(500);
    expect((await api.get(`${flags(project.id)}/${encodeURIComponent("' or 1=1 --")}`)).status).toBe(404);
    expect((await api.get(scopes(project.id, 'hh'))).body).toHaveLength(1);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// Developers and above, whatever the visibility; a private project of others is 404, never 403.
const dev = (ok: number) => ({
  private: { anonymous: 404, nonMember: 404, external: 404, guest: 403, reporter: 403, developer: ok, maintainer: ok, owner: ok, admin: ok },
  public: { anonymous: 403, nonMember: 403, external: 403, guest: 403, reporter: 403, developer: ok },
});
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/feature_flags': dev(200),
  'POST /projects/:id/feature_flags': dev(201),
  'GET /projects/:id/feature_flags/:name': dev(200),
  'PUT /projects/:id/feature_flags/:name': dev(200),
  'DELETE /projects/:id/feature_flags/:name': dev(200),
  'GET /projects/:id/feature_flag_scopes': dev(200),
  'GET /projects/:id/feature_flags/:name/scopes': dev(200),
  'POST /projects/:id/feature_flags/:name/scopes': dev(201),
  'GET /projects/:id/feature_flags/:name/scopes/:environment_scope': dev(200),
  'PUT /projects/:id/feature_flags/:name/scopes/:environment_scope': dev(200),
  'DELETE /projects/:id/feature_flags/:name/scopes/:environment_scope': dev(204),
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  let counter = 0;
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      projects.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const projectId = projects.get(visibility)!;
    // Every call gets a flag of its own with a `staging` scope, made by root.
    const name = `flag-${++counter}`;
    await createFlag(projectId, { name });
    await addScope(projectId, name, 'staging', false);
    const url = path.replace(':id', String(projectId)).replace(':name', name).replace(':environment_scope', 'staging');
    const bodies: Record<string, Record<string, unknown>> = {
      'POST /projects/:id/feature_flags': { name: `made-${counter}` },
      'PUT /projects/:id/feature_flags/:name': { description: 'changed' },
      'POST /projects/:id/feature_flags/:name/scopes': { environment_scope: 'production', active: true, strategies: DEFAULT },
      'PUT /projects/:id/feature_flags/:name/scopes/:environment_scope': { active: true, strategies: DEFAULT },
    };
    const query = path.endsWith('feature_flag_scopes') ? { environment: 'staging' } : undefined;
    const body = bodies[endpoint];
    return (await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}), ...(query ? { query } : {}) })).status;
  });
});
