import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, withScopes, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const base = (projectId: number) => `/projects/${projectId}/hooks`;
const allowLocal = (allow: boolean) => api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: allow });

/** Entities::ProjectHook of 12.10 with a new hook's defaults. */
const defaults = (projectId: number, url: string) => ({
  id: expect.any(Number),
  url,
  created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  push_events: true,
  tag_push_events: false,
  merge_requests_events: false,
  repository_update_events: false,
  enable_ssl_verification: true,
  project_id: projectId,
  issues_events: false,
  confidential_issues_events: false,
  note_events: false,
  confidential_note_events: null,
  pipeline_events: false,
  wiki_page_events: false,
  job_events: false,
  push_events_branch_filter: null,
});

describe('POST /projects/:id/hooks', () => {
  it('creates a hook with GitLab 12.10 defaults; the token is sealed, never shown or logged', async () => {
    const project = await createProject(api);
    const res = await api.post(base(project.id), { url: 'https://hooks.example.com/a', token: 'sekret-token' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(defaults(project.id, 'https://hooks.example.com/a'));
    expect(Object.keys(res.body)).toEqual(Object.keys(defaults(project.id, '')));
    const events = await api.events(`hook-${res.body.id}`);
    expect(events).toMatchObject([{ type: 'HookCreated', data: { id: res.body.id, kind: 'project', project_id: project.id, url: 'https://hooks.example.com/a', token: expect.stringMatching(/^[0-9a-f]{32}$/) } }]);
    expect(JSON.stringify(events)).not.toContain('sekret-token');
    const sealed = await api.handle.db.selectFrom('hook_secrets').select('sealed').where('hook_id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(sealed.sealed).toMatch(/^v1\./);
    expect(sealed.sealed).not.toContain('sekret');
  });

  it('sets every 12.10 attribute', async () => {
    const project = await createProject(api);
    const body = {
      url: 'https://hooks.example.com/all',
      push_events: false,
      issues_events: true,
      confidential_issues_events: true,
      merge_requests_events: true,
      tag_push_events: true,
      note_events: true,
      confidential_note_events: true,
      job_events: true,
      pipeline_events: true,
      wiki_page_events: true,
      enable_ssl_verification: false,
      push_events_branch_filter: 'release/*',
    };
    const res = await api.post(base(project.id), body);
    expect(res.status).toBe(201);
    const { url, ...flags } = body;
    expect(res.body).toEqual({ ...defaults(project.id, url), ...flags });
  });

  it("answers Grape's, the model's and the SSRF guard's refusals as GitLab does, writing nothing", async () => {
    const project = await createProject(api);
    expect(await api.post(base(project.id), {})).toMatchObject({ status: 400, body: { error: 'url is missing' } });
    expect(await api.post(base(project.id), { url: 'https://x.example.com', push_events: 'maybe' })).toMatchObject({ status: 400, body: { error: 'push_events is invalid' } });
    expect(await api.post(base(project.id), { url: '' })).toMatchObject({ status: 422, body: { error: 'Invalid url given' } });
    expect(await api.post(base(project.id), { url: 'ftp://x.example.com' })).toMatchObject({ status: 422, body: { error: 'Invalid url given' } });
    expect(await api.post(base(project.id), { url: 'not a url' })).toMatchObject({ status: 422, body: { error: 'Invalid url given' } });
    expect(await allowLocal(false)).toMatchObject({ status: 200 });
    expect(await api.post(base(project.id), { url: 'http://127.0.0.1:9/x' })).toMatchObject({ status: 422, body: { error: 'Invalid url given' } });
    expect(await api.post(base(project.id), { url: 'https://x.example.com', push_events_branch_filter: 'a..b' })).toMatchObject({
      status: 422,
      body: { error: 'Invalid branch filter given' },
    });
    expect(await api.post(base(project.id), { url: 'https://x.example.com', token: 'a\nb' })).toMatchObject({
      status: 404,
      body: { message: '404 Project hook {:token=>["is invalid"]} Not Found' },
    });
    expect((await api.get(base(project.id))).body).toEqual([]);
    // Allowed again: a local URL saves.
    expect(await allowLocal(true)).toMatchObject({ status: 200 });
    expect((await api.post(base(project.id), { url: 'http://127.0.0.1:9/x' })).status).toBe(201);
  });

  it('is 404 for an unknown project, and the project is checked before the parameters', async () => {
    expect(await api.post(base(99999999), {})).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

describe('GET /projects/:id/hooks and /hooks/:hook_id', () => {
  it('lists the project hooks by id, paginated, and shows one; another project hook is 404', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const a = (await api.post(base(project.id), { url: 'https://a.example.com' })).body;
    const b = (await api.post(base(project.id), { url: 'https://b.example.com' })).body;
    const foreign = (await api.post(base(other.id), { url: 'https://c.example.com' })).body;
    const list = await api.get(base(project.id));
    expect(list.status).toBe(200);
    expect(list.body).toEqual([a, b]);
    expect(list.headers.get('x-total')).toBe('2');
    expect((await api.get(base(project.id), { query: { per_page: 1, page: 2 } })).body).toEqual([b]);
    expect(await api.get(`${base(project.id)}/${a.id}`)).toMatchObject({ status: 200, body: a });
    expect(await api.get(`${base(project.id)}/${foreign.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base(project.id)}/abc`)).toMatchObject({ status: 400, body: { error: 'hook_id is invalid' } });
    expect(await api.get(`${base(project.id)}/99999999999`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('PUT /projects/:id/hooks/:hook_id', () => {
  it('changes what is sent and keeps the rest (the token too); url is required', async () => {
    const project = await createProject(api);
    const hook = (await api.post(base(project.id), { url: 'https://a.example.com', token: 'first', merge_requests_events: true })).body;
    expect(await api.put(`${base(project.id)}/${hook.id}`, { push_events: false })).toMatchObject({ status: 400, body: { error: 'url is missing' } });
    const res = await api.put(`${base(project.id)}/${hook.id}`, { url: 'https://b.example.com', push_events: false, push_events_branch_filter: 'main' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...hook, url: 'https://b.example.com', push_events: false, push_events_branch_filter: 'main' });
    const events = await api.events(`hook-${hook.id}`);
    expect(events.map((e) => e.type)).toEqual(['HookCreated', 'HookUpdated']);
    expect(events[1]!.data.token).toBe(events[0]!.data.token);
    // The same again changes nothing; a new token changes its fingerprint.
    expect((await api.put(`${base(project.id)}/${hook.id}`, { url: 'https://b.example.com' })).status).toBe(200);
    expect((await api.events(`hook-${hook.id}`)).length).toBe(2);
    expect((await api.put(`${base(project.id)}/${hook.id}`, { url: 'https://b.example.com', token: 'second' })).status).toBe(200);
    const after = await api.events(`hook-${hook.id}`);
    expect(after[2]!.data.token).not.toBe(events[0]!.data.token);
    expect(await api.put(`${base(project.id)}/${hook.id}`, { url: 'gopher://b' })).toMatchObject({ status: 422, body: { error: 'Invalid url given' } });
    expect(await api.put(`${base(project.id)}/99999`, { url: 'https://b.example.com' })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('DELETE /projects/:id/hooks/:hook_id', () => {
  it('deletes the hook and its token', async () => {
    const project = await createProject(api);
    const hook = (await api.post(base(project.id), { url: 'https://a.example.com', token: 't' })).body;
    expect((await api.del(`${base(project.id)}/${hook.id}`)).status).toBe(204);
    expect(await api.get(`${base(project.id)}/${hook.id}`)).toMatchObject({ status: 404 });
    expect(await api.handle.db.selectFrom('hook_secrets').select('hook_id').where('hook_id', '=', hook.id).executeTakeFirst()).toBeUndefined();
    expect((await api.del(`${base(project.id)}/${hook.id}`)).status).toBe(404);
    expect((await api.events(`hook-${hook.id}`)).map((e) => e.type)).toEqual(['HookCreated', 'HookDeleted']);
  });

  it("goes with its project", async () => {
    const project = await createProject(api);
    const hook = (await api.post(base(project.id), { url: 'https://a.example.com', token: 't' })).body;
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    const gone = async () => api.handle.db.selectFrom('hooks').select('id').where('id', '=', hook.id).executeTakeFirst();
    for (const deadline = Date.now() + 10_000; (await gone()) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    expect(await gone()).toBeUndefined();
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'internal' | 'public';

// `authorize_admin_project`: maintainers, owners and admins; a private project of others is 404.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/hooks':             { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 }, internal: { anonymous: 401, nonMember: 403, developer: 403, maintainer: 200 }, public: { anonymous: 401, nonMember: 403, guest: 403, maintainer: 200 } },
  'GET /projects/:id/hooks/:hook_id':    { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, maintainer: 200 } },
  'POST /projects/:id/hooks':            { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 201, admin: 201 }, internal: { nonMember: 403, maintainer: 201 }, public: { anonymous: 401, nonMember: 403, developer: 403, maintainer: 201 } },
  'PUT /projects/:id/hooks/:hook_id':    { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, developer: 403, maintainer: 200 } },
  'DELETE /projects/:id/hooks/:hook_id': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 204, owner: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, developer: 403, maintainer: 204 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  const shared = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'internal', 'public'] as const) {
      const projectId = await sourceWithRoles(api, callers, 'projects', visibility);
      projects.set(visibility, projectId);
      shared.set(visibility, (await api.post(base(projectId), { url: 'https://m.example.com' })).body.id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const projectId = projects.get(visibility)!;
    // Only a deletion needs a hook of its own; the others share the one made for the scope.
    const hookId = method === 'DELETE' ? (await api.post(base(projectId), { url: 'https://m.example.com' })).body.id : shared.get(visibility)!;
    const url = path.replace(':id', String(projectId)).replace(':hook_id', String(hookId));
    const body = method === 'POST' || method === 'PUT' ? { url: 'https://n.example.com' } : undefined;
    return (await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}) })).status;
  });

  it('reads with read_api, writes with api only', async () => {
    const projectId = projects.get('private')!;
    const readOnly = await withScopes(api, callers.maintainer, ['read_api']);
    expect((await api.get(base(projectId), { token: readOnly.token })).status).toBe(200);
    expect((await api.post(base(projectId), { url: 'https://r.example.com' }, { token: readOnly.token })).status).toBe(403);
  });
});
