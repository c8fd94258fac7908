import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
type User = { user: any; token: string };
let owner: User, visitor: User, other: User, member: User, external: User;
/** More requesters for the listing. */
let visitors: User[];

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  // Shared users (a password hash each): every test works on a fresh group or project.
  const users = await Promise.all([...[1, 2, 3, 4].map(() => api.createUser()), api.createUser({ external: true }), ...[1, 2, 3].map(() => api.createUser())]);
  [owner, visitor, other, member, external] = users as [User, User, User, User, User];
  visitors = users.slice(5);
});
afterAll(() => api.close());

type Kind = 'groups' | 'projects';
type Visibility = 'private' | 'internal' | 'public';

/** A group owned by `owner`, or a project in such a group (the owner manages both). */
async function fresh(kind: Kind, options: { visibility?: Visibility; request_access_enabled?: boolean } = {}) {
  const visibility = options.visibility ?? 'public';
  const settings = { visibility, ...(options.request_access_enabled === undefined ? {} : { request_access_enabled: options.request_access_enabled }) };
  if (kind === 'groups') {
    const group = await createGroup(api, { token: owner.token, ...settings });
    return { id: group.id, stream: `members-group-${group.id}` };
  }
  const group = await createGroup(api, { token: owner.token, visibility });
  const project = await createProject(api, { token: owner.token, group, ...settings });
  return { id: project.id, stream: `members-project-${project.id}` };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const requesterOf = (user: any) => ({
  id: user.id,
  name: user.name,
  username: user.username,
  state: 'active',
  avatar_url: expect.any(String),
  web_url: `${api.url}/${user.username}`,
  created_at: expect.stringMatching(ISO),
  requested_at: expect.stringMatching(ISO),
});

describe.each<Kind>(['groups', 'projects'])('/%s/:id/access_requests', (kind) => {
  describe(`POST /${kind}/:id/access_requests`, () => {
    it('records a request for the caller (201, AccessRequested)', async () => {
      const source = await fresh(kind);
      const res = await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(requesterOf(visitor.user));
      expect(Object.keys(res.body)).toEqual(['id', 'name', 'username', 'state', 'avatar_url', 'web_url', 'created_at', 'requested_at']);
      expect((await api.events(source.stream)).at(-1)).toMatchObject({
        type: 'AccessRequested',
        data: { source_id: source.id, user_id: visitor.user.id },
        metadata: { actor_id: visitor.user.id },
      });
    });

    it('is 400 "already exists in source" for a second request', async () => {
      const source = await fresh(kind);
      await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      const res = await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { user_id: ['already exists in source'] } });
    });

    it('is 403 for members (direct or inherited), administrators, and when requests are off', async () => {
      const source = await fresh(kind);
      await addMember(api, kind, source.id, member.user.id, 10);
      for (const token of [member.token, owner.token, api.rootToken]) {
        const res = await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ message: '403 Forbidden' });
      }
      const closed = await fresh(kind, { request_access_enabled: false });
      expect((await api.post(`/${kind}/${closed.id}/access_requests`, undefined, { token: visitor.token })).status).toBe(403);
    });

    it('is 401 anonymously, 404 on a private source and for external users on an internal one', async () => {
      const open = await fresh(kind);
      expect((await api.post(`/${kind}/${open.id}/access_requests`, undefined, { token: null })).body).toEqual({ message: '401 Unauthorized' });
      const hidden = await fresh(kind, { visibility: 'private' });
      const res = await api.post(`/${kind}/${hidden.id}/access_requests`, undefined, { token: visitor.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: kind === 'groups' ? '404 Group Not Found' : '404 Project Not Found' });
      const internal = await fresh(kind, { visibility: 'internal' });
      expect((await api.post(`/${kind}/${internal.id}/access_requests`, undefined, { token: external.token })).status).toBe(404);
      expect((await api.post(`/${kind}/${internal.id}/access_requests`, undefined, { token: visitor.token })).status).toBe(201);
    });
  });

  describe(`GET /${kind}/:id/access_requests`, () => {
    it('lists pending requests for managers, paginated; 403 for others', async () => {
      const source = await fresh(kind);
      for (const v of visitors) await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: v.token });
      const res = await api.get(`/${kind}/${source.id}/access_requests`, { token: owner.token, query: { per_page: 2 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([requesterOf(visitors[0]!.user), requesterOf(visitors[1]!.user)]);
      expect(res.headers.get('x-total')).toBe('3');
      expect(res.headers.get('x-next-page')).toBe('2');
      const denied = await api.get(`/${kind}/${source.id}/access_requests`, { token: visitors[0]!.token });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ message: '403 Forbidden' });
      expect((await api.get(`/${kind}/${source.id}/access_requests`, { token: null })).status).toBe(401);
    });
  });

  describe(`PUT /${kind}/:id/access_requests/:user_id/approve`, () => {
    it('makes the requester a developer by default (201, the member entity, AccessRequestApproved)', async () => {
      const source = await fresh(kind);
      await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      const res = await api.put(`/${kind}/${source.id}/access_requests/${visitor.user.id}/approve`, undefined, { token: owner.token });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: visitor.user.id,
        name: visitor.user.name,
        username: visitor.user.username,
        state: 'active',
        avatar_url: expect.any(String),
        web_url: `${api.url}/${visitor.user.username}`,
        access_level: 30,
        expires_at: null,
      });
      expect((await api.events(source.stream)).at(-1)).toMatchObject({
        type: 'AccessRequestApproved',
        data: { user_id: visitor.user.id, access_level: 30, approved_by_id: owner.user.id },
      });
      expect((await api.get(`/${kind}/${source.id}/access_requests`)).body).toEqual([]);
      expect((await api.get(`/${kind}/${source.id}/members/${visitor.user.id}`)).body.access_level).toBe(30);
    });

    it('approves at the given access_level; validates it', async () => {
      const source = await fresh(kind);
      await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      const invalid = await api.put(`/${kind}/${source.id}/access_requests/${visitor.user.id}/approve`, { access_level: 15 });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toEqual({ message: { access_level: ['is not included in the list'] } });
      const res = await api.put(`/${kind}/${source.id}/access_requests/${visitor.user.id}/approve`, { access_level: 40 });
      expect(res.status).toBe(201);
      expect(res.body.access_level).toBe(40);
    });

    it('is 404 "Not found" without a request (even for non-managers), 403 for non-managers otherwise', async () => {
      const source = await fresh(kind);
      const missing = await api.put(`/${kind}/${source.id}/access_requests/${visitor.user.id}/approve`, undefined, { token: other.token });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: '404 Not found' });
      await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      const forbidden = await api.put(`/${kind}/${source.id}/access_requests/${visitor.user.id}/approve`, undefined, { token: other.token });
      expect(forbidden.status).toBe(403);
      expect((await api.put(`/${kind}/${source.id}/access_requests/${visitor.user.id}/approve`, undefined, { token: visitor.token })).status).toBe(403);
      expect((await api.put(`/${kind}/${source.id}/access_requests/abc/approve`)).body).toEqual({ error: 'user_id is invalid' });
    });

    it('is also what adding a requester as a member does', async () => {
      const source = await fresh(kind);
      await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      const res = await api.post(`/${kind}/${source.id}/members`, { user_id: visitor.user.id, access_level: 20 });
      expect(res.status).toBe(201);
      expect(res.body.access_level).toBe(20);
      expect((await api.events(source.stream)).at(-1)).toMatchObject({ type: 'AccessRequestApproved', data: { user_id: visitor.user.id, access_level: 20 } });
      expect((await api.get(`/${kind}/${source.id}/access_requests`)).body).toEqual([]);
    });
  });

  describe(`DELETE /${kind}/:id/access_requests/:user_id`, () => {
    it('denies a request (204, AccessRequestDenied)', async () => {
      const source = await fresh(kind);
      await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      const res = await api.del(`/${kind}/${source.id}/access_requests/${visitor.user.id}`, { token: owner.token });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await api.events(source.stream)).at(-1)).toMatchObject({ type: 'AccessRequestDenied', data: { user_id: visitor.user.id, withdrawn: false } });
      expect((await api.get(`/${kind}/${source.id}/access_requests`)).body).toEqual([]);
      expect((await api.get(`/${kind}/${source.id}/members/${visitor.user.id}`)).status).toBe(404);
      const again = await api.del(`/${kind}/${source.id}/access_requests/${visitor.user.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 Not found' });
    });

    it('lets the requester withdraw, but nobody else without rights', async () => {
      const source = await fresh(kind);
      await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token });
      const forbidden = await api.del(`/${kind}/${source.id}/access_requests/${visitor.user.id}`, { token: other.token });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual({ message: '403 Forbidden' });
      expect((await api.del(`/${kind}/${source.id}/access_requests/${visitor.user.id}`, { token: visitor.token })).status).toBe(204);
      expect((await api.events(source.stream)).at(-1)).toMatchObject({ type: 'AccessRequestDenied', data: { withdrawn: true } });
      // Withdrawn: the visitor may ask again.
      expect((await api.post(`/${kind}/${source.id}/access_requests`, undefined, { token: visitor.token })).status).toBe(201);
    });
  });
});

describe('POST /projects/:id/access_requests on an archived project', () => {
  it('is 403: GitLab makes an archived project read-only (ProjectPolicy prevents request_access)', async () => {
    const project = await fresh('projects');
    expect((await api.post(`/projects/${project.id}/archive`, undefined, { token: owner.token })).status).toBe(201);
    const res = await api.post(`/projects/${project.id}/access_requests`, undefined, { token: visitor.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden' });
    expect((await api.post(`/projects/${project.id}/unarchive`, undefined, { token: owner.token })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/access_requests`, undefined, { token: visitor.token })).status).toBe(201);
  });
});
