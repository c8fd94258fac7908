import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, withScopes, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({}, { deliveries: false });
  await settled(api);
});
afterAll(() => api.close());

const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe('POST /hooks', () => {
  it("creates a system hook with SystemHook's defaults (Entities::Hook); the token is sealed", async () => {
    const res = await api.post('/hooks', { url: 'https://system.example.com/a', token: 'system-secret' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      url: 'https://system.example.com/a',
      created_at: time,
      push_events: false,
      tag_push_events: false,
      merge_requests_events: false,
      repository_update_events: true,
      enable_ssl_verification: true,
    });
    const events = await api.events(`hook-${res.body.id}`);
    expect(events).toMatchObject([{ type: 'HookCreated', data: { kind: 'system', project_id: null, group_id: null } }]);
    expect(JSON.stringify(events)).not.toContain('system-secret');
  });

  it('sets its five flags', async () => {
    const body = { url: 'https://system.example.com/b', push_events: true, tag_push_events: true, merge_requests_events: true, repository_update_events: false, enable_ssl_verification: false };
    const res = await api.post('/hooks', body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), created_at: time, ...body });
  });

  it("answers Grape's 400 and the model's render_validation_error!", async () => {
    expect(await api.post('/hooks', {})).toMatchObject({ status: 400, body: { error: 'url is missing' } });
    expect(await api.post('/hooks', { url: 'ftp://x' })).toMatchObject({ status: 400, body: { message: { url: ['is blocked: Only allowed schemes are http, https'] } } });
    expect(await api.post('/hooks', { url: 'https://x.example.com', token: 'a\nb' })).toMatchObject({ status: 400, body: { message: { token: ['is invalid'] } } });
  });

  it('allows local URLs under allow_local_requests_from_system_hooks (default true), not otherwise', async () => {
    expect((await api.post('/hooks', { url: 'http://127.0.0.1:9/local' })).status).toBe(201);
    expect((await api.put('/application/settings', { allow_local_requests_from_system_hooks: false })).status).toBe(200);
    try {
      expect(await api.post('/hooks', { url: 'http://127.0.0.1:9/local' })).toMatchObject({ status: 400, body: { message: { url: ['is blocked: Requests to localhost are not allowed'] } } });
    } finally {
      expect((await api.put('/application/settings', { allow_local_requests_from_system_hooks: true })).status).toBe(200);
    }
  });
});

describe('GET /hooks, GET /hooks/:id (the test), DELETE /hooks/:id', () => {
  it('lists every system hook and no project hook', async () => {
    const a = (await api.post('/hooks', { url: 'https://list.example.com/a' })).body;
    const project = (await api.post('/projects', { name: `p${Date.now()}` })).body;
    expect((await api.post(`/projects/${project.id}/hooks`, { url: 'https://list.example.com/p' })).status).toBe(201);
    const list = (await api.get('/hooks', { query: { per_page: 100 } })).body as { id: number; url: string }[];
    expect(list.find((h) => h.id === a.id)).toEqual(a);
    expect(list.some((h) => h.url === 'https://list.example.com/p')).toBe(false);
  });

  it("GET /hooks/:id executes the hook with 12.10's sample data and answers it; a missing one is 404", async () => {
    // A system hook hears every event its reactor has not reached yet: the earlier tests' first.
    await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
    const hook = (await api.post('/hooks', { url: 'https://test.example.com/a' })).body;
    const res = await api.get(`/hooks/${hook.id}`);
    expect(res).toMatchObject({ status: 200, body: { event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com' } });
    const rows = await api.handle.db.selectFrom('integration_deliveries').selectAll().where('hook_id', '=', hook.id).execute();
    expect(rows).toMatchObject([{ kind: 'system_hook', flag: 'system_hooks', event_type: 'SystemHookTest', status: 'pending', project_id: null, integration_id: null }]);
    expect(await api.get('/hooks/99999999')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get('/hooks/abc')).toMatchObject({ status: 400, body: { error: 'id is invalid' } });
  });

  it('deletes a hook and its token; a missing one is "404 System hook Not Found"', async () => {
    const hook = (await api.post('/hooks', { url: 'https://del.example.com/a', token: 't' })).body;
    expect((await api.del(`/hooks/${hook.id}`)).status).toBe(204);
    expect(await api.del(`/hooks/${hook.id}`)).toMatchObject({ status: 404, body: { message: '404 System hook Not Found' } });
    expect(await api.handle.db.selectFrom('hook_secrets').select('hook_id').where('hook_id', '=', hook.id).executeTakeFirst()).toBeUndefined();
    // A project hook is no system hook.
    const project = (await api.post('/projects', { name: `q${Date.now()}` })).body;
    const projectHook = (await api.post(`/projects/${project.id}/hooks`, { url: 'https://del.example.com/p' })).body;
    expect((await api.del(`/hooks/${projectHook.id}`)).status).toBe(404);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

// `authenticated_as_admin!`: 401 anonymous, 403 every other user.
// prettier-ignore
const MATRIX: MatrixTable<Role, 'instance'> = {
  'GET /hooks':        { instance: { anonymous: 401, nonMember: 403, maintainer: 403, owner: 403, external: 403, blocked: 403, admin: 200 } },
  'POST /hooks':       { instance: { anonymous: 401, nonMember: 403, maintainer: 403, owner: 403, admin: 201 } },
  'GET /hooks/:id':    { instance: { anonymous: 401, nonMember: 403, owner: 403, admin: 200 } },
  'DELETE /hooks/:id': { instance: { anonymous: 401, nonMember: 403, owner: 403, admin: 204 } },
};

describe('permissions', () => {
  let callers: Callers;
  beforeAll(async () => {
    callers = await createCallers(api);
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const hook = (await api.post('/hooks', { url: 'https://m.example.com' })).body;
    const body = method === 'POST' ? { url: 'https://n.example.com' } : undefined;
    return (await api.request(method, path.replace(':id', String(hook.id)), { token: callers[caller].token, ...(body ? { body } : {}) })).status;
  });

  it('an admin reads with read_api and writes with api', async () => {
    const readOnly = await withScopes(api, callers.admin, ['read_api']);
    expect((await api.get('/hooks', { token: readOnly.token })).status).toBe(200);
    expect((await api.post('/hooks', { url: 'https://r.example.com' }, { token: readOnly.token })).status).toBe(403);
  });
});
