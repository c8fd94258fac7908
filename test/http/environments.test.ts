import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const FORMAT = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'";

const base = (projectId: number) => `/projects/${projectId}/environments`;
const create = (projectId: number, body: Record<string, unknown>, token?: string | null) => api.post(base(projectId), body, token === undefined ? {} : { token });
const eventTypes = async (id: number) => (await api.events(`environment-${id}`)).map((e) => e.type);
const rowCount = async (projectId: number) =>
  Number((await sql<{ n: string }>`select count(*) as n from environments where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);

describe('POST /projects/:id/environments', () => {
  it('creates an available environment with its slug, and appends EnvironmentCreated', async () => {
    const project = await createProject(api);
    const res = await create(project.id, { name: 'production', external_url: 'https://prod.example.com' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), name: 'production', slug: 'production', external_url: 'https://prod.example.com', project: expect.any(Object), state: 'available' });
    // The project as Entities::BasicProjectDetails embeds it.
    expect(res.body.project).toMatchObject({ id: project.id, path_with_namespace: project.path_with_namespace, namespace: { kind: 'user', full_path: 'root' } });
    expect(res.body.project).not.toHaveProperty('visibility');
    const listed = (await api.get('/projects', { query: { simple: true, search: project.path_with_namespace.split('/')[1]! } })).body;
    expect(res.body.project).toEqual(listed.find((p: any) => p.id === project.id));
    const events = await api.events(`environment-${res.body.id}`);
    expect(events).toMatchObject([{ type: 'EnvironmentCreated', data: { id: res.body.id, project_id: project.id, name: 'production', slug: 'production' } }]);

    // A group's project embeds the group as its namespace (no owner's avatar).
    const inGroup = await createProject(api, { group: await createGroup(api) });
    const grouped = await create(inGroup.id, { name: 'staging' });
    expect(grouped.status).toBe(201);
    const groupListed = (await api.get('/projects', { query: { simple: true, search: inGroup.path_with_namespace.split('/')[1]! } })).body;
    expect(grouped.body.project).toEqual(groupListed.find((p: any) => p.id === inGroup.id));
    expect(grouped.body.project.namespace).toMatchObject({ kind: 'group', avatar_url: null });

    const review = await create(project.id, { name: 'Review/Fix-Foo' });
    expect(review.status).toBe(201);
    expect(review.body).toMatchObject({ name: 'Review/Fix-Foo', external_url: null, state: 'available' });
    expect(review.body.slug).toMatch(/^review-fix-foo-[a-z0-9]{6}$/);
    expect((await create(project.id, { name: '123' })).body.slug).toMatch(/^env-123-[a-z0-9]{6}$/);
  });

  it("answers Grape's parameter errors before looking at the project", async () => {
    const project = await createProject(api);
    expect(await create(project.id, {})).toMatchObject({ status: 400, body: { error: 'name is missing' } });
    expect(await create(project.id, { name: 'x', slug: 'mine' })).toMatchObject({ status: 400, body: { error: 'slug is automatically generated and cannot be changed' } });
    expect(await create(project.id, { slug: 'mine' })).toMatchObject({ status: 400, body: { error: 'name is missing, slug is automatically generated and cannot be changed' } });
    expect(await create(999999, {})).toMatchObject({ status: 400, body: { error: 'name is missing' } });
    expect(await create(999999, { name: 'x' })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(await rowCount(project.id)).toBe(0);
  });

  it("validates as GitLab's model does, and writes nothing then", async () => {
    const project = await createProject(api);
    expect((await create(project.id, { name: 'staging' })).status).toBe(201);
    expect(await create(project.id, { name: 'staging' })).toMatchObject({ status: 400, body: { message: { name: ['has already been taken'] } } });
    expect(await create(project.id, { name: '/staging' })).toMatchObject({ status: 400, body: { message: { name: [FORMAT] } } });
    expect(await create(project.id, { name: '' })).toMatchObject({ status: 400, body: { message: { name: ["can't be blank", FORMAT] } } });
    expect(await create(project.id, { name: 'x', external_url: 'ftp://example.com' })).toMatchObject({
      status: 400,
      body: { message: { external_url: ['is blocked: Only allowed schemes are http, https'] } },
    });
    expect(await create(project.id, { name: 'x', external_url: 'nope' })).toMatchObject({ status: 400, body: { message: { external_url: ['is blocked: URI is invalid'] } } });
    expect(await rowCount(project.id)).toBe(1);
    // Names are unique within a project only.
    const other = await createProject(api);
    expect((await create(other.id, { name: 'staging' })).status).toBe(201);
  });
});

describe('GET /projects/:id/environments', () => {
  let project: { id: number };
  beforeAll(async () => {
    project = await createProject(api);
    for (const name of ['review/a', 'Review/B', 'production', 'staging', 'review_c']) expect((await create(project.id, { name })).status).toBe(201);
  });

  it('lists by id, paginated', async () => {
    const res = await api.get(base(project.id), { query: { per_page: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.map((e: any) => e.name)).toEqual(['review/a', 'Review/B']);
    expect(Object.keys(res.body[0])).toEqual(['id', 'name', 'slug', 'external_url', 'project', 'state']);
    expect(res.body[1].project).toEqual(res.body[0].project);
    expect(res.body[0].project.id).toBe(project.id);
    expect(res.headers.get('x-total')).toBe('5');
    expect(res.headers.get('x-next-page')).toBe('2');
  });

  it('filters by exact name, or by a case-insensitive name prefix', async () => {
    expect((await api.get(base(project.id), { query: { name: 'review/a' } })).body.map((e: any) => e.name)).toEqual(['review/a']);
    expect((await api.get(base(project.id), { query: { name: 'review' } })).body).toEqual([]);
    expect((await api.get(base(project.id), { query: { search: 'review' } })).body.map((e: any) => e.name)).toEqual(['review/a', 'Review/B', 'review_c']);
    expect((await api.get(base(project.id), { query: { search: 'REVIEW/' } })).body.map((e: any) => e.name)).toEqual(['review/a', 'Review/B']);
    // LIKE's wildcards are plain characters in a search.
    expect((await api.get(base(project.id), { query: { search: 'review_' } })).body.map((e: any) => e.name)).toEqual(['review_c']);
    expect((await api.get(base(project.id), { query: { search: '%' } })).body).toEqual([]);
  });

  it('refuses name and search together', async () => {
    expect(await api.get(base(project.id), { query: { name: 'a', search: 'b' } })).toMatchObject({ status: 400, body: { error: 'name, search cannot be used together' } });
  });
});

describe('GET /projects/:id/environments/:environment_id', () => {
  it('shows one environment without its project, with last_deployment (null without deployments)', async () => {
    const project = await createProject(api);
    const { body: env } = await create(project.id, { name: 'production' });
    const res = await api.get(`${base(project.id)}/${env.id}`);
    expect(res.status).toBe(200);
    const { project: _, ...basic } = env;
    expect(res.body).toEqual({ ...basic, last_deployment: null });
    expect(Object.keys(res.body)).toEqual(['id', 'name', 'slug', 'external_url', 'last_deployment', 'state']);
  });

  it("answers 404 for an unknown id or another project's environment, 400 for a non-integer", async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const { body: env } = await create(other.id, { name: 'production' });
    for (const id of [env.id, 99999999, 2147483648]) expect(await api.get(`${base(project.id)}/${id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base(project.id)}/abc`)).toMatchObject({ status: 400, body: { error: 'environment_id is invalid' } });
  });
});

describe('PUT /projects/:id/environments/:environment_id', () => {
  it('renames and changes the URL, keeps the slug, frees the old name', async () => {
    const project = await createProject(api);
    const { body: env } = await create(project.id, { name: 'Review/One', external_url: 'https://one.example.com' });
    const res = await api.put(`${base(project.id)}/${env.id}`, { name: 'review/two', external_url: '' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...env, name: 'review/two', external_url: null });
    expect(await eventTypes(env.id)).toEqual(['EnvironmentCreated', 'EnvironmentUpdated']);
    expect((await create(project.id, { name: 'Review/One' })).status).toBe(201);
    // Nothing changed: nothing appended.
    expect((await api.put(`${base(project.id)}/${env.id}`, { name: 'review/two' })).status).toBe(200);
    expect(await eventTypes(env.id)).toEqual(['EnvironmentCreated', 'EnvironmentUpdated']);
  });

  it('refuses a slug, a taken name, an invalid one', async () => {
    const project = await createProject(api);
    const { body: env } = await create(project.id, { name: 'a' });
    expect((await create(project.id, { name: 'b' })).status).toBe(201);
    const path = `${base(project.id)}/${env.id}`;
    expect(await api.put(path, { slug: 'x' })).toMatchObject({ status: 400, body: { error: 'slug is automatically generated and cannot be changed' } });
    expect(await api.put(path, { name: 'b' })).toMatchObject({ status: 400, body: { message: { name: ['has already been taken'] } } });
    expect(await api.put(path, { name: 'b/' })).toMatchObject({ status: 400, body: { message: { name: [FORMAT] } } });
    expect(await api.put(`${base(project.id)}/99999999`, { name: 'c' })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await api.get(path)).body.name).toBe('a');
  });
});

describe('POST /projects/:id/environments/:environment_id/stop', () => {
  it('stops an available environment (200 with the record); a stopped one stays as it is', async () => {
    const project = await createProject(api);
    const { body: env } = await create(project.id, { name: 'review/x' });
    const res = await api.post(`${base(project.id)}/${env.id}/stop`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...env, state: 'stopped' });
    const again = await api.post(`${base(project.id)}/${env.id}/stop`);
    expect(again).toMatchObject({ status: 200, body: { state: 'stopped' } });
    expect(await eventTypes(env.id)).toEqual(['EnvironmentCreated', 'EnvironmentStopped']);
    expect(await api.post(`${base(project.id)}/99999999/stop`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('DELETE /projects/:id/environments/:environment_id', () => {
  it('deletes (204), frees the name, answers 404 afterwards', async () => {
    const project = await createProject(api);
    const { body: env } = await create(project.id, { name: 'production' });
    const res = await api.del(`${base(project.id)}/${env.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await api.get(`${base(project.id)}/${env.id}`)).toMatchObject({ status: 404 });
    expect(await api.del(`${base(project.id)}/${env.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await eventTypes(env.id)).toEqual(['EnvironmentCreated', 'EnvironmentDeleted']);
    expect((await create(project.id, { name: 'production' })).body.slug).toBe('production');
  });

  it('answers 412 when the environment changed after If-Unmodified-Since', async () => {
    const project = await createProject(api);
    const { body: env } = await create(project.id, { name: 'production' });
    const res = await api.del(`${base(project.id)}/${env.id}`, { headers: { 'if-unmodified-since': new Date(Date.now() - 3_600_000).toUTCString() } });
    expect(res).toMatchObject({ status: 412, body: { message: '412 Precondition Failed' } });
    expect((await api.get(`${base(project.id)}/${env.id}`)).status).toBe(200);
  });

  it("goes with its project's deletion", async () => {
    const project = await createProject(api);
    expect((await create(project.id, { name: 'production' })).status).toBe(201);
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    // A reactor removes the project; its environments go in the same transaction.
    await eventually(async () => ((await rowCount(project.id)) === 0 ? true : undefined));
    expect((await api.events(`project-${project.id}`)).map((e) => e.type)).toContain('ProjectDeleted');
  });
});

describe('a project without CI/CD', () => {
  it('has no environments to read or write (403)', async () => {
    const project = await createProject(api);
    expect((await api.put(`/projects/${project.id}`, { builds_access_level: 'disabled' })).status).toBe(200);
    const callers = await createCallers(api);
    expect((await api.post(`/projects/${project.id}/members`, { user_id: callers.maintainer.user!.id, access_level: 40 })).status).toBe(201);
    expect((await api.get(base(project.id), { token: callers.maintainer.token })).status).toBe(403);
    expect((await create(project.id, { name: 'x' }, callers.maintainer.token)).status).toBe(403);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// Reporters read, developers write; a private project of others is 404, never 403.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/environments':                             { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, guest: 403, reporter: 200 } },
  'GET /projects/:id/environments/:environment_id':             { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, reporter: 200 } },
  'POST /projects/:id/environments':                            { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 201 } },
  'PUT /projects/:id/environments/:environment_id':             { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 200, maintainer: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 200 } },
  'POST /projects/:id/environments/:environment_id/stop':       { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 200, maintainer: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 200 } },
  'DELETE /projects/:id/environments/:environment_id':          { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 204, maintainer: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 204 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  let counter = 0;
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) projects.set(visibility, await sourceWithRoles(api, callers, 'projects', visibility));
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const projectId = projects.get(visibility)!;
    // Every call gets an environment of its own, made by root.
    const env = (await create(projectId, { name: `env-${++counter}` })).body;
    const url = path.replace(':id', String(projectId)).replace(':environment_id', String(env.id));
    const token = callers[caller].token;
    const body = method === 'POST' && !path.endsWith('/stop') ? { name: `made-${counter}` } : method === 'PUT' ? { external_url: 'https://x.example.com' } : undefined;
    return (await api.request(method, url, { token, ...(body ? { body } : {}) })).status;
  });
});
