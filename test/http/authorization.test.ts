import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * One authorization model (GitLab's project_authorizations / max_member_access_for_user): a
 * user's level on a project or group is the HIGHEST over every way in, the same for the
 * per-resource decisions and the list filters; memberships expire by the command clock.
 */

const DAY = 24 * 60 * 60 * 1000;
let clock = new Date('2031-03-10T12:00:00Z');
const date = (offsetDays: number) => new Date(clock.getTime() + offsetDays * DAY).toISOString().slice(0, 10);

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
});
afterAll(() => api.close());

let counter = 0;
async function group(parentId?: number): Promise<{ id: number }> {
  const path = `authz-g${++counter}`;
  const res = await api.post('/groups', { name: path, path, visibility: 'private', ...(parentId ? { parent_id: parentId } : {}) });
  expect(res.status).toBe(201);
  return res.body;
}
async function project(namespaceId: number): Promise<{ id: number }> {
  const res = await api.post('/projects', { name: `authz-p${++counter}`, namespace_id: namespaceId, visibility: 'private' });
  expect(res.status).toBe(201);
  return res.body;
}
async function member(kind: 'groups' | 'projects', id: number, userId: number, accessLevel: number, expiresAt?: string) {
  const res = await api.post(`/${kind}/${id}/members`, { user_id: userId, access_level: accessLevel, ...(expiresAt ? { expires_at: expiresAt } : {}) });
  expect(res.status, res.text).toBe(201);
}
const ids = (body: { id: number }[]) => body.map((r) => r.id);

describe('a guest of a project who becomes maintainer of its group', () => {
  let user: { id: number };
  let token: string;
  let g: { id: number };
  let p: { id: number };
  beforeAll(async () => {
    ({ user, token } = await api.createUser());
    g = await group();
    p = await project(g.id);
    await member('projects', p.id, user.id, 10);
    await member('groups', g.id, user.id, 40);
  });

  it('is listed by GET /projects?min_access_level=40', async () => {
    const res = await api.get('/projects', { token, query: { min_access_level: 40 } });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([p.id]);
  });

  it('may update the project (GitLab: 200, the highest level counts)', async () => {
    const res = await api.put(`/projects/${p.id}`, { description: 'maintained' }, { token });
    expect(res.status).toBe(200);
    expect(res.body.description).toBe('maintained');
    // user_can_admin_project: the runners token is shown to maintainers.
    expect(res.body.runners_token).toEqual(expect.any(String));
  });

  it('sees the project as a maintainer, while permissions show the direct memberships as GitLab does', async () => {
    const res = await api.get(`/projects/${p.id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.runners_token).toEqual(expect.any(String));
    expect(res.body.permissions).toEqual({
      project_access: { access_level: 10, notification_level: 3 },
      group_access: { access_level: 40, notification_level: 3 },
    });
  });

  it('is still refused what needs an owner', async () => {
    const res = await api.put(`/projects/${p.id}`, { visibility: 'internal' }, { token });
    expect(res.status).toBe(403);
  });
});

describe('a guest of a subgroup who becomes owner of its parent', () => {
  let user: { id: number };
  let token: string;
  let parent: { id: number };
  let sub: { id: number };
  beforeAll(async () => {
    ({ user, token } = await api.createUser());
    parent = await group();
    sub = await group(parent.id);
    await member('groups', sub.id, user.id, 10);
    await member('groups', parent.id, user.id, 50);
  });

  it('administers the subgroup (GitLab: max_member_access_for_user over the ancestors)', async () => {
    const res = await api.put(`/groups/${sub.id}`, { description: 'owned from above' }, { token });
    expect(res.status).toBe(200);
    expect(res.body.description).toBe('owned from above');
  });

  it('is listed by GET /groups?min_access_level=50 for both groups', async () => {
    const res = await api.get('/groups', { token, query: { min_access_level: 50 } });
    expect(res.status).toBe(200);
    expect(ids(res.body).sort((a, b) => a - b)).toEqual([parent.id, sub.id].sort((a, b) => a - b));
  });

  it('owns a project of the subgroup (rename, visibility)', async () => {
    const p = await project(sub.id);
    const res = await api.put(`/projects/${p.id}`, { name: 'renamed by the owner above' }, { token });
    expect(res.status).toBe(200);
  });
});

describe('memberships expire by the command clock', () => {
  let user: { id: number };
  let token: string;
  let g: { id: number };
  let p: { id: number };
  let other: { id: number };
  beforeAll(async () => {
    ({ user, token } = await api.createUser());
    g = await group();
    p = await project(g.id);
    other = await project(g.id);
    // The project membership first: one below an inherited level is refused (GitLab's validation).
    await member('projects', other.id, user.id, 30, date(15));
    await member('groups', g.id, user.id, 40, date(5));
  });

  it('honours a membership until its expires_at, then no longer — everywhere', async () => {
    const before = await api.put(`/projects/${p.id}`, { description: 'before' }, { token });
    expect(before.status).toBe(200);
    expect(ids((await api.get('/projects', { token, query: { min_access_level: 40 } })).body).sort()).toEqual([p.id, other.id].sort());

    // On its expires_at the membership still counts (it ends after that date).
    clock = new Date(clock.getTime() + 5 * DAY);
    expect((await api.put(`/projects/${p.id}`, { description: 'on the last day' }, { token })).status).toBe(200);

    clock = new Date(clock.getTime() + 1 * DAY);
    // The group membership expired: the private project is hidden, the other answers by the
    // project's own (developer) membership, and no list counts the group membership.
    expect((await api.get(`/projects/${p.id}`, { token })).status).toBe(404);
    expect((await api.put(`/projects/${other.id}`, { description: 'as developer' }, { token })).status).toBe(403);
    expect((await api.get(`/projects/${other.id}`, { token })).status).toBe(200);
    expect(ids((await api.get('/projects', { token, query: { min_access_level: 40 } })).body)).toEqual([]);
    expect(ids((await api.get('/projects', { token, query: { min_access_level: 30 } })).body)).toEqual([other.id]);
    expect(ids((await api.get('/projects', { token, query: { membership: true } })).body)).toEqual([other.id]);
    expect(ids((await api.get('/groups', { token, query: { min_access_level: 10 } })).body)).toEqual([]);
    // The group stays visible through the project the user may still see (has_projects).
    expect((await api.get(`/groups/${g.id}`, { token })).status).toBe(200);

    clock = new Date(clock.getTime() + 10 * DAY);
    expect((await api.get(`/projects/${other.id}`, { token })).status).toBe(404);
    expect((await api.get(`/groups/${g.id}`, { token })).status).toBe(404);
    expect(ids((await api.get('/projects', { token, query: { membership: true } })).body)).toEqual([]);
    // The user's token (no expiry) still authenticates: only the memberships ended.
    expect((await api.get('/user', { token })).status).toBe(200);
  });
});
