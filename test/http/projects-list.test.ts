import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * GET /projects (ProjectsFinder) and GET /groups/:id/projects (GroupProjectsFinder): filters,
 * ordering, offset and keyset pagination, and the views each caller gets.
 */

let api: TestServer;
afterAll(() => api.close());

const tokens = {} as Record<'alice' | 'bob' | 'outsider', string>;
const ids = {} as Record<string, number>;
const userIds = {} as Record<'alice' | 'bob' | 'outsider', number>;
let team: { id: number; full_path: string };
let sub: { id: number };
let other: { id: number };

async function create(name: string, body: Record<string, unknown>, token = api.rootToken) {
  const res = await api.post('/projects', { name, ...body }, { token });
  if (res.status !== 201) throw new Error(`POST /projects ${res.status} ${res.text}`);
  ids[name] = res.body.id;
  return res.body;
}

beforeAll(async () => {
  api = await startTestServer();
  for (const name of ['alice', 'bob', 'outsider'] as const) {
    const created = await api.createUser({ username: `list-${name}` });
    tokens[name] = created.token;
    userIds[name] = created.user.id;
  }
  team = (await api.post('/groups', { name: 'Team', path: 'team', visibility: 'public' })).body;
  sub = (await api.post('/groups', { name: 'Sub', path: 'sub', parent_id: team.id, visibility: 'public' })).body;
  other = (await api.post('/groups', { name: 'Other', path: 'other', visibility: 'private' })).body;
  await addMember(api, 'groups', team.id, userIds.bob, 30);

  // In creation order (the default order is created_at desc).
  await create('Alpha Public', { path: 'alpha', visibility: 'public', description: 'the first one' }, tokens.alice);
  await create('Beta Private', { path: 'beta', visibility: 'private' }, tokens.alice);
  await create('Gamma Internal', { path: 'gamma', namespace_id: team.id, visibility: 'internal', issues_access_level: 'private' });
  await create('Delta Public', { path: 'delta', namespace_id: team.id, visibility: 'public', merge_requests_enabled: false });
  await create('Epsilon Private', { path: 'epsilon', namespace_id: team.id, visibility: 'private' });
  await create('Zeta Sub', { path: 'zeta', namespace_id: sub.id, visibility: 'public' });
  await create('Eta Other', { path: 'eta', namespace_id: other.id, visibility: 'private' });
  await create('Theta Archived', { path: 'theta', namespace_id: team.id, visibility: 'public' });
  await api.post(`/projects/${ids['Theta Archived']}/archive`);
  await api.post(`/projects/${ids['Alpha Public']}/star`, undefined, { token: tokens.bob });
  // Eta is shared with Team.
  const shared = await api.post(`/projects/${ids['Eta Other']}/share`, { group_id: team.id, group_access: 20 });
  if (shared.status !== 201) throw new Error(`POST /projects/:id/share ${shared.status} ${shared.text}`);
});

const names = (body: any[]) => body.map((p) => p.name);

describe('GET /projects', () => {
  it('lists what the caller may see, newest first, with offset pagination headers', async () => {
    const res = await api.get('/projects', { token: tokens.bob, query: { per_page: 3 } });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Theta Archived', 'Eta Other', 'Zeta Sub']);
    expect(res.headers.get('x-total')).toBe('7');
    expect(res.headers.get('x-total-pages')).toBe('3');
    expect(res.headers.get('x-per-page')).toBe('3');
    expect(res.headers.get('x-page')).toBe('1');
    expect(res.headers.get('x-next-page')).toBe('2');
    expect(res.headers.get('link')).toContain('rel="next"');
    const all = await api.get('/projects', { token: tokens.bob, query: { per_page: 100 } });
    // Bob: public and internal ones, Team's private one through his membership, and Other's one
    // through its share with Team — not Alice's private one.
    expect(names(all.body)).toEqual(['Theta Archived', 'Eta Other', 'Zeta Sub', 'Epsilon Private', 'Delta Public', 'Gamma Internal', 'Alpha Public']);
  });

  it('shows the permissions of each project in the list (the namespace’s own group membership)', async () => {
    const res = await api.get('/projects', { token: tokens.bob, query: { search: 'zeta' } });
    expect(res.body[0].permissions).toEqual({ project_access: null, group_access: null });
    const gamma = await api.get('/projects', { token: tokens.bob, query: { search: 'gamma' } });
    expect(gamma.body[0].permissions).toEqual({ project_access: null, group_access: { access_level: 30, notification_level: 3 } });
  });

  it('gives anonymous callers the public projects in the simple view', async () => {
    const res = await api.get('/projects', { token: null });
    expect(names(res.body)).toEqual(['Theta Archived', 'Zeta Sub', 'Delta Public', 'Alpha Public']);
    expect(Object.keys(res.body[0])).not.toContain('_links');
    for (const filter of ['owned', 'membership', 'starred'] as const) {
      expect(names((await api.get('/projects', { token: null, query: { [filter]: true } })).body), filter).toEqual(filter === 'starred' ? names(res.body) : []);
    }
  });

  it('filters by owned, membership, starred and min_access_level', async () => {
    const get = async (query: Record<string, string | number | boolean>, token = tokens.alice) => names((await api.get('/projects', { token, query })).body);
    expect(await get({ owned: true })).toEqual(['Beta Private', 'Alpha Public']);
    expect(await get({ membership: true }, tokens.bob)).toEqual(['Theta Archived', 'Eta Other', 'Zeta Sub', 'Epsilon Private', 'Delta Public', 'Gamma Internal']);
    expect(await get({ min_access_level: 40 }, tokens.bob)).toEqual([]);
    // The share gives reporter access only.
    expect(await get({ min_access_level: 30 }, tokens.bob)).toEqual(['Theta Archived', 'Zeta Sub', 'Epsilon Private', 'Delta Public', 'Gamma Internal']);
    expect(await get({ min_access_level: 20 }, tokens.bob)).toContain('Eta Other');
    expect(await get({ starred: true }, tokens.bob)).toEqual(['Alpha Public']);
    // Root owns the groups it created: owned covers them (and their subgroups).
    expect(await get({ owned: true, per_page: 100 }, api.rootToken)).toEqual(['Theta Archived', 'Eta Other', 'Zeta Sub', 'Epsilon Private', 'Delta Public', 'Gamma Internal']);
  });

  it('filters by search, visibility, archived, features, ids and language', async () => {
    const get = async (query: Record<string, string | number | boolean>) => names((await api.get('/projects', { token: tokens.bob, query })).body);
    expect(await get({ search: 'public' })).toEqual(['Delta Public', 'Alpha Public']);
    expect(await get({ search: 'first one' })).toEqual(['Alpha Public']);
    // GitLab: a query without a word of 3+ characters matches only whole values.
    expect(await get({ search: 'be' })).toEqual([]);
    expect(await get({ search: 'BETA' })).toEqual([]);
    expect(await get({ visibility: 'internal' })).toEqual(['Gamma Internal']);
    expect(await get({ archived: true })).toEqual(['Theta Archived']);
    expect(await get({ archived: false })).not.toContain('Theta Archived');
    expect(await get({ with_merge_requests_enabled: true })).not.toContain('Delta Public');
    expect(await get({ with_issues_enabled: true })).toContain('Gamma Internal');
    expect(names((await api.get('/projects', { token: tokens.outsider, query: { with_issues_enabled: true } })).body)).not.toContain('Gamma Internal');
    expect(await get({ id_after: ids['Zeta Sub']! })).toEqual(['Theta Archived', 'Eta Other']);
    expect(await get({ id_before: ids['Beta Private']! })).toEqual(['Alpha Public']);
    expect(await get({ with_programming_language: 'Ruby' })).toEqual([]);
  });

  it('orders by name, path, id and the timestamps, both ways', async () => {
    const get = async (query: Record<string, string>) => names((await api.get('/projects', { token: tokens.alice, query: { owned: 'true', ...query } })).body);
    expect(await get({ order_by: 'name', sort: 'asc' })).toEqual(['Alpha Public', 'Beta Private']);
    expect(await get({ order_by: 'path', sort: 'desc' })).toEqual(['Beta Private', 'Alpha Public']);
    expect(await get({ order_by: 'id', sort: 'asc' })).toEqual(['Alpha Public', 'Beta Private']);
    expect(await get({ order_by: 'last_activity_at' })).toEqual(['Beta Private', 'Alpha Public']);
    expect(await get({ order_by: 'updated_at', sort: 'asc' })).toEqual(['Alpha Public', 'Beta Private']);
  });

  it('returns the simple view with simple=true', async () => {
    const res = await api.get('/projects', { token: tokens.alice, query: { simple: true, owned: true } });
    expect(Object.keys(res.body[0])).toEqual([
      'id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at', 'default_branch', 'tag_list',
      'ssh_url_to_repo', 'http_url_to_repo', 'web_url', 'readme_url', 'avatar_url', 'star_count', 'forks_count', 'last_activity_at', 'namespace',
    ]);
  });

  it('answers parameter errors like Grape', async () => {
    expect(await api.get('/projects', { query: { order_by: 'stars', visibility: 'hidden', min_access_level: 15 } })).toMatchObject({
      status: 400,
      body: { error: 'order_by does not have a valid value, visibility does not have a valid value, min_access_level does not have a valid value' },
    });
  });

  describe('keyset pagination', () => {
    it('follows Link rel="next" with id_before (desc) to the end, without offset headers', async () => {
      let url: string | null = `${api.apiUrl}/projects?pagination=keyset&order_by=id&per_page=2`;
      const seen: number[] = [];
      let pages = 0;
      while (url) {
        const res = await fetch(url, { headers: { 'PRIVATE-TOKEN': api.rootToken } });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-total')).toBeNull();
        expect(res.headers.get('x-page')).toBeNull();
        const body = (await res.json()) as { id: number }[];
        seen.push(...body.map((p) => p.id));
        const link = res.headers.get('link');
        if (link) expect(link).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/api\/v4\/projects\?.*id_before=\d+.*>; rel="next"$/);
        url = link ? /<([^>]+)>/.exec(link)![1]! : null;
        pages++;
      }
      const all = Object.values(ids).sort((a, b) => b - a);
      expect(seen).toEqual(all);
      expect(pages).toBe(Math.ceil(all.length / 2));
    });

    it('uses id_after ascending, and omits the link on the last page', async () => {
      const first = await api.get('/projects', { query: { pagination: 'keyset', order_by: 'id', sort: 'asc', per_page: 7 } });
      expect(first.body.map((p: any) => p.id)).toEqual(Object.values(ids).sort((a, b) => a - b).slice(0, 7));
      const link = first.headers.get('link')!;
      expect(link).toContain(`id_after=${first.body.at(-1).id}`);
      const next = await fetch(/<([^>]+)>/.exec(link)![1]!, { headers: { 'PRIVATE-TOKEN': api.rootToken } });
      expect(((await next.json()) as unknown[]).length).toBe(1);
      expect(next.headers.get('link')).toBeNull();
    });

    it('is 405 for any other order', async () => {
      for (const query of [{ pagination: 'keyset' }, { pagination: 'keyset', order_by: 'name' }] as Record<string, string>[]) {
        expect(await api.get('/projects', { query })).toMatchObject({ status: 405, body: { error: 'Keyset pagination is not yet available for this type of request' } });
      }
    });
  });
});

describe('GET /users/:user_id/projects and /starred_projects', () => {
  it("lists a user's personal projects the caller may see, by id or username", async () => {
    expect(names((await api.get(`/users/${userIds.alice}/projects`, { token: tokens.bob })).body)).toEqual(['Alpha Public']);
    expect(names((await api.get('/users/list-alice/projects', { token: tokens.alice })).body)).toEqual(['Beta Private', 'Alpha Public']);
    expect(names((await api.get(`/users/${userIds.alice}/projects`, { token: null })).body)).toEqual(['Alpha Public']);
    expect(names((await api.get(`/users/${userIds.bob}/projects`, { token: tokens.bob })).body)).toEqual([]);
    expect(await api.get('/users/999999/projects')).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
  });

  it('lists the projects a user starred', async () => {
    const res = await api.get(`/users/${userIds.bob}/starred_projects`, { token: tokens.outsider });
    expect(names(res.body)).toEqual(['Alpha Public']);
    expect(res.body[0].permissions).toEqual({ project_access: null, group_access: null });
    expect((await api.get(`/users/${userIds.alice}/starred_projects`)).body).toEqual([]);
  });
});

describe('GET /groups/:id/projects', () => {
  it("lists the group's active projects and the ones shared with it, newest first", async () => {
    const res = await api.get(`/groups/${team.id}/projects`, { token: tokens.bob });
    expect(res.status).toBe(200);
    // Archived ones are left out by default; Eta is shared with Team, so Bob sees it through the share.
    expect(names(res.body)).toEqual(['Eta Other', 'Epsilon Private', 'Delta Public', 'Gamma Internal']);
    expect(res.headers.get('x-total')).toBe('4');
    expect(res.body[0].shared_with_groups).toEqual([{ group_id: team.id, group_name: 'Team', group_full_path: 'team', group_access_level: 20, expires_at: null }]);
    expect('permissions' in res.body[0]).toBe(false);
    expect(res.body[0]._links).toBeDefined();
    expect(names((await api.get(`/groups/${team.id}/projects`, { token: tokens.outsider })).body)).toEqual(['Delta Public', 'Gamma Internal']);
  });

  it('filters by archived, with_shared, include_subgroups, visibility, search and min_access_level', async () => {
    const get = async (query: Record<string, string | number | boolean>, token: string | null = api.rootToken) =>
      names((await api.get(`/groups/${team.id}/projects`, { token, query })).body);
    expect(await get({ archived: true })).toEqual(['Theta Archived']);
    expect(await get({ with_shared: false })).toEqual(['Epsilon Private', 'Delta Public', 'Gamma Internal']);
    expect(await get({ include_subgroups: true, with_shared: false })).toEqual(['Zeta Sub', 'Epsilon Private', 'Delta Public', 'Gamma Internal']);
    expect(await get({ visibility: 'public' })).toEqual(['Delta Public']);
    expect(await get({ search: 'gamma' })).toEqual(['Gamma Internal']);
    expect(await get({ min_access_level: 40 }, tokens.bob)).toEqual([]);
    expect(await get({ min_access_level: 30 }, tokens.bob)).toEqual(['Epsilon Private', 'Delta Public', 'Gamma Internal']);
    expect(await get({ owned: true }, tokens.bob)).toEqual([]);
    expect(await get({ order_by: 'name', sort: 'asc' })).toEqual(['Delta Public', 'Epsilon Private', 'Eta Other', 'Gamma Internal']);
    expect(await get({ with_merge_requests_enabled: true })).not.toContain('Delta Public');
  });

  it("embeds each project's own namespace: the group's, a subgroup's, another group's and a user's (shared)", async () => {
    const namespaceOf = async (id: number) => (await api.get(`/projects/${id}`)).body.namespace;
    const listed = (await api.get(`/groups/${team.id}/projects`, { query: { include_subgroups: true } })).body;
    expect(listed.length).toBeGreaterThan(3);
    for (const project of listed) expect(project.namespace).toEqual(await namespaceOf(project.id));
    expect(new Set(listed.map((p: any) => p.namespace.id))).toEqual(new Set([team.id, sub.id, other.id]));

    // A user's project shared with a group of its own: the owner's avatar, read for the personal namespace.
    const crew = await api.post('/groups', { name: 'Crew', path: 'list-crew' });
    const personal = await create('Iota Personal', {}, tokens.alice);
    expect((await api.post(`/projects/${personal.id}/share`, { group_id: crew.body.id, group_access: 20 })).status).toBe(201);
    const [shared] = (await api.get(`/groups/${crew.body.id}/projects`)).body;
    expect(shared.namespace).toMatchObject({ kind: 'user', full_path: 'list-alice', avatar_url: expect.stringContaining('gravatar') });
    expect(shared.namespace).toEqual(await namespaceOf(personal.id));
    expect((await api.get(`/groups/${crew.body.id}`)).body.shared_projects[0].namespace).toEqual(shared.namespace);
  });

  it('shows anonymous callers the public projects in the full record, simple on request', async () => {
    const res = await api.get(`/groups/${team.id}/projects`, { token: null });
    expect(names(res.body)).toEqual(['Delta Public']);
    expect(res.body[0]._links).toBeDefined();
    const simple = await api.get(`/groups/${team.id}/projects`, { token: null, query: { simple: true } });
    expect(simple.body[0]._links).toBeUndefined();
  });

  it('opens a shared project to the members of the group it is shared with', async () => {
    const res = await api.get(`/projects/${ids['Eta Other']}`, { token: tokens.bob });
    expect(res.status).toBe(200);
    expect(res.body.permissions).toEqual({ project_access: null, group_access: null });
    // The share gives reporter access: enough to read, not to administer.
    expect('runners_token' in res.body).toBe(false);
    expect((await api.put(`/projects/${ids['Eta Other']}`, { description: 'x' }, { token: tokens.bob })).status).toBe(403);
    expect((await api.get(`/projects/${ids['Eta Other']}`, { token: tokens.outsider })).status).toBe(404);
  });

  it("answers 404 for a group the caller may not see and keyset's 405 for another order", async () => {
    expect(await api.get(`/groups/${other.id}/projects`, { token: tokens.outsider })).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
    expect((await api.get(`/groups/${team.id}/projects`, { query: { pagination: 'keyset' } })).status).toBe(405);
    const keyset = await api.get(`/groups/${team.id}/projects`, { query: { pagination: 'keyset', order_by: 'id', per_page: 1 } });
    expect(keyset.headers.get('link')).toContain(`id_before=${keyset.body[0].id}`);
  });
});
