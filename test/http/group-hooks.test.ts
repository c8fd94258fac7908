import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({ plan: 'starter' }, { deliveries: false });
  await settled(api);
});
afterAll(() => api.close());

const base = (groupId: number) => `/groups/${groupId}/hooks`;

describe('/groups/:id/hooks (GitLab EE starter, group_webhooks)', () => {
  it('creates, lists, shows, changes and deletes a group hook (EE::API::Entities::GroupHook)', async () => {
    const group = await createGroup(api);
    const res = await api.post(base(group.id), { url: 'https://group.example.com/a', token: 'g-secret', issues_events: true });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      url: 'https://group.example.com/a',
      created_at: expect.any(String),
      push_events: true,
      tag_push_events: false,
      merge_requests_events: false,
      repository_update_events: false,
      enable_ssl_verification: true,
      group_id: group.id,
      issues_events: true,
      confidential_issues_events: false,
      note_events: false,
      confidential_note_events: null,
      pipeline_events: false,
      wiki_page_events: false,
      job_events: false,
    });
    expect(JSON.stringify(await api.events(`hook-${res.body.id}`))).not.toContain('g-secret');
    expect(await api.get(base(group.id))).toMatchObject({ status: 200, body: [res.body] });
    expect(await api.get(`${base(group.id)}/${res.body.id}`)).toMatchObject({ status: 200, body: res.body });
    const put = await api.put(`${base(group.id)}/${res.body.id}`, { url: 'https://group.example.com/b', merge_requests_events: true });
    expect(put).toMatchObject({ status: 200, body: { ...res.body, url: 'https://group.example.com/b', merge_requests_events: true } });
    expect(await api.post(base(group.id), { url: 'nope' })).toMatchObject({ status: 422, body: { error: 'Invalid url given' } });
    expect(await api.post(base(group.id), { url: 'https://x.example.com', token: 'a\nb' })).toMatchObject({ status: 404, body: { message: '404 Group hook {:token=>["is invalid"]} Not Found' } });
    expect((await api.del(`${base(group.id)}/${res.body.id}`)).status).toBe(204);
    expect(await api.get(`${base(group.id)}/${res.body.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it("another group's hook is not found", async () => {
    const [a, b] = [await createGroup(api), await createGroup(api)];
    const hook = (await api.post(base(a.id), { url: 'https://group.example.com/c' })).body;
    expect(await api.get(`${base(b.id)}/${hook.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('without the licence', () => {
  it('there is no such route (GitLab CE)', async () => {
    const group = await createGroup(api);
    await onPlan(api, 'free', async () => {
      expect(await api.get(base(group.id))).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
      expect(await api.post(base(group.id), { url: 'https://x.example.com' })).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
    });
    expect((await api.get(base(group.id))).status).toBe(200);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// `authorize! :admin_group, user_group`: owners and admins; a private group of others is 404.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /groups/:id/hooks':             { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, maintainer: 403, owner: 200 } },
  'GET /groups/:id/hooks/:hook_id':    { private: { anonymous: 401, nonMember: 404, guest: 403, maintainer: 403, owner: 200, admin: 200 }, public: { nonMember: 403, owner: 200 } },
  'POST /groups/:id/hooks':            { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, maintainer: 403, owner: 201 } },
  'PUT /groups/:id/hooks/:hook_id':    { private: { anonymous: 401, nonMember: 404, maintainer: 403, owner: 200, admin: 200 }, public: { nonMember: 403, owner: 200 } },
  'DELETE /groups/:id/hooks/:hook_id': { private: { anonymous: 401, nonMember: 404, maintainer: 403, owner: 204, admin: 204 }, public: { nonMember: 403, owner: 204 } },
};

describe('permissions', () => {
  let callers: Callers;
  const groups = new Map<Visibility, number>();
  const shared = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const groupId = await sourceWithRoles(api, callers, 'groups', visibility);
      groups.set(visibility, groupId);
      shared.set(visibility, (await api.post(base(groupId), { url: 'https://m.example.com' })).body.id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const groupId = groups.get(visibility)!;
    // Only a deletion needs a hook of its own; the others share the one made for the scope.
    const hookId = method === 'DELETE' ? (await api.post(base(groupId), { url: 'https://m.example.com' })).body.id : shared.get(visibility)!;
    const url = path.replace(':id', String(groupId)).replace(':hook_id', String(hookId));
    const body = method === 'POST' || method === 'PUT' ? { url: 'https://n.example.com' } : undefined;
    return (await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}) })).status;
  });
});
