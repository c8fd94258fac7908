import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membersProjector } from '../../src/projections/members/projector.js';
import { addMember, createGroup, createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let owner: { user: any; token: string };
/** Users shared by the tests: each test works on a fresh group or project, so they do not interfere. */
let pool: { user: any; token: string }[];
let anna: { user: any; token: string }, bert: { user: any; token: string };

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  // Creating a user hashes a password (scrypt): make them once, in parallel.
  [owner, anna, bert, ...pool] = await Promise.all([
    api.createUser(),
    api.createUser({ name: 'Anna Zed' }),
    api.createUser({ name: 'Bert Zed' }),
    ...[1, 2, 3, 4, 5].map(() => api.createUser()),
  ]);
});
afterAll(() => api.close());

type Kind = 'groups' | 'projects';
interface Source {
  kind: Kind;
  id: number;
  path: string;
  stream: string;
  /** The group a project lives in (the project itself for groups). */
  groupId: number;
}

/** A fresh private group owned by `owner`, or a private project in such a group. */
async function fresh(kind: Kind, options: { visibility?: 'private' | 'internal' | 'public' } = {}): Promise<Source> {
  const group = await createGroup(api, { token: owner.token, visibility: options.visibility ?? 'private' });
  if (kind === 'groups') return { kind, id: group.id, path: group.full_path, stream: `members-group-${group.id}`, groupId: group.id };
  const project = await createProject(api, { token: owner.token, group, visibility: options.visibility ?? 'private' });
  return { kind, id: project.id, path: project.path_with_namespace, stream: `members-project-${project.id}`, groupId: group.id };
}

const MEMBER_KEYS = ['id', 'name', 'username', 'state', 'avatar_url', 'web_url', 'access_level', 'expires_at'];
const memberOf = (user: any, access_level: number, expires_at: string | null = null) => ({
  id: user.id,
  name: user.name,
  username: user.username,
  state: 'active',
  avatar_url: expect.stringMatching(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/),
  web_url: `${api.url}/${user.username}`,
  access_level,
  expires_at,
});

describe.each<Kind>(['groups', 'projects'])('/%s/:id/members', (kind) => {
  const NOT_FOUND = { message: kind === 'groups' ? '404 Group Not Found' : '404 Project Not Found' };

  describe(`GET /${kind}/:id/members`, () => {
    it('as anonymous is 401, even on a public source', async () => {
      const source = await fresh(kind, { visibility: 'public' });
      const res = await api.get(`/${kind}/${source.id}/members`, { token: null });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it('as a non-member of a private source is 404', async () => {
      const source = await fresh(kind);
      const stranger = pool[4]!;
      const res = await api.get(`/${kind}/${source.id}/members`, { token: stranger.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
      expect((await api.get(`/${kind}/999999/members`)).body).toEqual(NOT_FOUND);
    });

    it("lists direct members in GitLab's Member entity shape, by id or URL-encoded full path", async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      await api.post(`/${kind}/${source.id}/members`, { user_id: alice.user.id, access_level: 30, expires_at: '2031-05-06' }, { token: owner.token });
      const res = await api.get(`/${kind}/${encodeURIComponent(source.path)}/members`, { token: alice.token });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      const expected = kind === 'groups' ? [memberOf(owner.user, 50), memberOf(alice.user, 30, '2031-05-06')] : [memberOf(alice.user, 30, '2031-05-06')];
      expect(res.body).toEqual(expected);
      expect(Object.keys(res.body.at(-1))).toEqual(MEMBER_KEYS);
    });

    it('filters by query (name, username or exact email) and user_ids[]', async () => {
      const source = await fresh(kind);
      for (const u of [anna, bert]) await addMember(api, kind, source.id, u.user.id, 20);
      const ids = (res: any) => res.body.map((m: any) => m.id);
      expect(ids(await api.get(`/${kind}/${source.id}/members`, { query: { query: 'anna' } }))).toEqual([anna.user.id]);
      expect(ids(await api.get(`/${kind}/${source.id}/members`, { query: { query: 'zed' } }))).toEqual([anna.user.id, bert.user.id]);
      expect(ids(await api.get(`/${kind}/${source.id}/members`, { query: { query: bert.user.email.toUpperCase() } }))).toEqual([bert.user.id]);
      expect(ids(await api.get(`/${kind}/${source.id}/members`, { query: { query: '@example.com' } }))).toEqual([]);
      expect(ids(await api.get(`/${kind}/${source.id}/members`, { query: { user_ids: [bert.user.id, 999999] } }))).toEqual([bert.user.id]);
      expect((await api.get(`/${kind}/${source.id}/members`, { query: { user_ids: ['x'] } })).body).toEqual({ error: 'user_ids is invalid' });
    });

    it('paginates with GitLab offset headers', async () => {
      const source = await fresh(kind);
      for (const u of pool.slice(0, 3)) await addMember(api, kind, source.id, u.user.id, 10);
      const total = kind === 'groups' ? 4 : 3;
      const res = await api.get(`/${kind}/${source.id}/members`, { query: { per_page: 2, page: 2 } });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(total - 2);
      expect(res.headers.get('x-total')).toBe(String(total));
      expect(res.headers.get('x-total-pages')).toBe('2');
      expect(res.headers.get('x-per-page')).toBe('2');
      expect(res.headers.get('x-page')).toBe('2');
      expect(res.headers.get('x-next-page')).toBe('');
      expect(res.headers.get('x-prev-page')).toBe('1');
      const link = res.headers.get('link')!;
      expect(link).toContain(`<${api.apiUrl}/${kind}/${source.id}/members?per_page=2&page=1>; rel="prev"`);
      expect(link).toContain('rel="first"');
      expect(link).toContain(`page=2>; rel="last"`);
    });
  });

  describe(`GET /${kind}/:id/members/:user_id`, () => {
    it('shows a direct member; 404 "Not found" otherwise; 400 for a non-integer id', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      await addMember(api, kind, source.id, alice.user.id, 20);
      const res = await api.get(`/${kind}/${source.id}/members/${alice.user.id}`, { token: alice.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(memberOf(alice.user, 20));
      const missing = await api.get(`/${kind}/${source.id}/members/999999`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: '404 Not found' });
      const invalid = await api.get(`/${kind}/${source.id}/members/abc`);
      expect(invalid.status).toBe(400);
      expect(invalid.body).toEqual({ error: 'user_id is invalid' });
      expect((await api.get(`/${kind}/${source.id}/members/${alice.user.id}`, { token: null })).status).toBe(401);
    });
  });

  describe(`POST /${kind}/:id/members`, () => {
    it('adds a member (201) and appends MemberAdded with the actor', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      const res = await api.post(`/${kind}/${source.id}/members`, { user_id: alice.user.id, access_level: 20, expires_at: '2032-01-02' }, { token: owner.token });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(memberOf(alice.user, 20, '2032-01-02'));
      expect(Object.keys(res.body)).toEqual(MEMBER_KEYS);
      const events = await api.events(source.stream);
      expect(events.at(-1)).toMatchObject({
        type: 'MemberAdded',
        data: {
          source_type: kind === 'groups' ? 'Namespace' : 'Project',
          source_id: source.id,
          user_id: alice.user.id,
          access_level: 20,
          expires_at: '2032-01-02',
          created_by_id: owner.user.id,
        },
        metadata: { actor_id: owner.user.id },
      });
      const row = await api.handle.db
        .selectFrom('members')
        .selectAll()
        .where('user_id', '=', alice.user.id)
        .where('source_id', '=', source.id)
        .where('source_type', '=', kind === 'groups' ? 'Namespace' : 'Project')
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ source_id: source.id, access_level: 20, expires_at: '2032-01-02', created_by_id: owner.user.id });
    });

    it('accepts form-encoded parameters and a full datetime for expires_at', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      const res = await api.request('POST', `/${kind}/${source.id}/members`, {
        form: { user_id: String(alice.user.id), access_level: '30', expires_at: '2033-03-04T10:00:00Z' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ id: alice.user.id, access_level: 30, expires_at: '2033-03-04' });
    });

    it('is 409 "Member already exists" for a member', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      await addMember(api, kind, source.id, alice.user.id, 20);
      const before = (await api.events(source.stream)).length;
      const res = await api.post(`/${kind}/${source.id}/members`, { user_id: alice.user.id, access_level: 30 });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Member already exists' });
      expect(await api.events(source.stream)).toHaveLength(before);
    });

    it('is 404 "User Not Found" for an unknown user', async () => {
      const source = await fresh(kind);
      const res = await api.post(`/${kind}/${source.id}/members`, { user_id: 999999, access_level: 30 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
    });

    it('is 400 for an invalid access level (owner only on groups)', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      for (const level of [0, 35, 60]) {
        const res = await api.post(`/${kind}/${source.id}/members`, { user_id: alice.user.id, access_level: level });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: { access_level: ['is not included in the list'] } });
      }
      const owner50 = await api.post(`/${kind}/${source.id}/members`, { user_id: alice.user.id, access_level: 50 });
      if (kind === 'groups') {
        expect(owner50.status).toBe(201);
        expect(owner50.body.access_level).toBe(50);
      } else {
        expect(owner50.status).toBe(400);
        expect(owner50.body).toEqual({ message: { access_level: ['is not included in the list'] } });
      }
    });

    it("is 400 with Grape's messages for missing or malformed parameters", async () => {
      const source = await fresh(kind);
      expect((await api.post(`/${kind}/${source.id}/members`, {})).body).toEqual({ error: 'user_id is missing, access_level is missing' });
      const bad = await api.post(`/${kind}/${source.id}/members`, { user_id: 'me', access_level: 'dev', expires_at: 'soon' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'user_id is invalid, access_level is invalid, expires_at is invalid' });
    });

    it('refuses a level below the inherited one (GitLab: higher_access_level_than_group)', async () => {
      const source = await fresh(kind);
      const parentName = (await api.get(`/groups/${source.groupId}`)).body.name;
      const alice = pool[0]!;
      let target = source;
      if (kind === 'groups') {
        const sub = await createGroup(api, { token: owner.token, parent: { id: source.id } });
        target = { ...source, id: sub.id };
      }
      await addMember(api, 'groups', source.groupId, alice.user.id, 30);
      const res = await api.post(`/${kind}/${target.id}/members`, { user_id: alice.user.id, access_level: 20 });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { access_level: [`should be greater than or equal to Developer inherited membership from group ${parentName}`] } });
      expect((await api.post(`/${kind}/${target.id}/members`, { user_id: alice.user.id, access_level: 40 })).status).toBe(201);
    });
  });

  describe(`PUT /${kind}/:id/members/:user_id`, () => {
    it('changes the level and expiry (MemberUpdated); an empty expires_at clears it', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      await addMember(api, kind, source.id, alice.user.id, 20);
      const res = await api.put(`/${kind}/${source.id}/members/${alice.user.id}`, { access_level: 40, expires_at: '2034-02-03' }, { token: owner.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(memberOf(alice.user, 40, '2034-02-03'));
      expect((await api.events(source.stream)).at(-1)).toMatchObject({
        type: 'MemberUpdated',
        data: { user_id: alice.user.id, access_level: 40, expires_at: '2034-02-03' },
        metadata: { actor_id: owner.user.id },
      });
      const kept = await api.put(`/${kind}/${source.id}/members/${alice.user.id}`, { access_level: 30 });
      expect(kept.body).toMatchObject({ access_level: 30, expires_at: '2034-02-03' });
      const cleared = await api.put(`/${kind}/${source.id}/members/${alice.user.id}`, { access_level: 30, expires_at: '' });
      expect(cleared.body).toMatchObject({ access_level: 30, expires_at: null });
      expect((await api.get(`/${kind}/${source.id}/members/${alice.user.id}`)).body).toEqual(memberOf(alice.user, 30));
    });

    it('is 404 for a non-member, 400 for a missing or invalid level', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      await addMember(api, kind, source.id, alice.user.id, 20);
      const missing = await api.put(`/${kind}/${source.id}/members/999999`, { access_level: 30 });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: '404 Not found' });
      const noLevel = await api.put(`/${kind}/${source.id}/members/${alice.user.id}`, {});
      expect(noLevel.status).toBe(400);
      expect(noLevel.body).toEqual({ error: 'access_level is missing' });
      const invalid = await api.put(`/${kind}/${source.id}/members/${alice.user.id}`, { access_level: kind === 'groups' ? 45 : 50 });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toEqual({ message: { access_level: ['is not included in the list'] } });
    });
  });

  describe(`DELETE /${kind}/:id/members/:user_id`, () => {
    it('removes a member (204, MemberRemoved)', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      await addMember(api, kind, source.id, alice.user.id, 20);
      const res = await api.del(`/${kind}/${source.id}/members/${alice.user.id}`, { token: owner.token });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await api.events(source.stream)).at(-1)).toMatchObject({ type: 'MemberRemoved', data: { user_id: alice.user.id, reason: 'removed' } });
      expect((await api.get(`/${kind}/${source.id}/members/${alice.user.id}`)).status).toBe(404);
      const again = await api.del(`/${kind}/${source.id}/members/${alice.user.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 Not found' });
    });

    it('lets a member leave, but not remove somebody else', async () => {
      const source = await fresh(kind);
      const [alice, bob] = [pool[0]!, pool[1]!];
      await addMember(api, kind, source.id, alice.user.id, 10);
      await addMember(api, kind, source.id, bob.user.id, 30);
      const other = await api.del(`/${kind}/${source.id}/members/${alice.user.id}`, { token: bob.token });
      expect(other.status).toBe(403);
      expect(other.body).toEqual({ message: '403 Forbidden' });
      expect((await api.del(`/${kind}/${source.id}/members/${alice.user.id}`, { token: alice.token })).status).toBe(204);
      expect((await api.events(source.stream)).at(-1)).toMatchObject({ type: 'MemberRemoved', data: { user_id: alice.user.id, reason: 'left' } });
    });

    it('is 412 when the membership changed after If-Unmodified-Since', async () => {
      const source = await fresh(kind);
      const alice = pool[0]!;
      await addMember(api, kind, source.id, alice.user.id, 20);
      const res = await api.del(`/${kind}/${source.id}/members/${alice.user.id}`, { headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
      expect(res.status).toBe(412);
      expect(res.body).toEqual({ message: '412 Precondition Failed' });
    });
  });
});

// ───────────────────────────── Owners ─────────────────────────────

describe('the owners of a group', () => {
  it('keeps its last owner: demoting or removing them is 403, even for an administrator', async () => {
    const group = await createGroup(api, { token: owner.token });
    const demote = await api.put(`/groups/${group.id}/members/${owner.user.id}`, { access_level: 40 });
    expect(demote.status).toBe(403);
    expect(demote.body).toEqual({ message: '403 Forbidden' });
    expect((await api.del(`/groups/${group.id}/members/${owner.user.id}`, { token: owner.token })).status).toBe(403);
    expect((await api.del(`/groups/${group.id}/members/${owner.user.id}`)).status).toBe(403);
    expect((await api.get(`/groups/${group.id}/members/${owner.user.id}`)).body.access_level).toBe(50);
  });

  it('lets an owner go while another active owner remains', async () => {
    const group = await createGroup(api, { token: owner.token });
    const second = await api.createUser();
    await addMember(api, 'groups', group.id, second.user.id, 50);
    // A blocked owner does not count (GitLab: members_with_parents counts active users).
    expect((await api.post(`/users/${second.user.id}/block`)).status).toBe(201);
    expect((await api.put(`/groups/${group.id}/members/${owner.user.id}`, { access_level: 40 })).status).toBe(403);
    await api.post(`/users/${second.user.id}/unblock`);
    expect((await api.put(`/groups/${group.id}/members/${owner.user.id}`, { access_level: 40 })).status).toBe(200);
    expect((await api.del(`/groups/${group.id}/members/${second.user.id}`)).status).toBe(403);
  });

  it("counts the ancestors' owners: a subgroup's only direct owner can leave", async () => {
    const top = await createGroup(api, { token: owner.token });
    const founder = pool[0]!;
    await addMember(api, 'groups', top.id, founder.user.id, 40);
    const sub = await createGroup(api, { token: founder.token, parent: top });
    const members = await api.get(`/groups/${sub.id}/members`);
    expect(members.body.map((m: any) => [m.id, m.access_level])).toEqual([[founder.user.id, 50]]);
    expect((await api.del(`/groups/${sub.id}/members/${founder.user.id}`, { token: founder.token })).status).toBe(204);
  });
});

describe("a personal project's owner", () => {
  it('is its maintainer and cannot be changed or removed (GitLab: target_is_owner)', async () => {
    const dev = pool[1]!;
    const project = await createProject(api, { token: dev.token });
    const res = await api.get(`/projects/${project.id}/members`, { token: dev.token });
    expect(res.body).toEqual([memberOf(dev.user, 40)]);
    expect((await api.put(`/projects/${project.id}/members/${dev.user.id}`, { access_level: 30 })).status).toBe(403);
    expect((await api.del(`/projects/${project.id}/members/${dev.user.id}`, { token: dev.token })).status).toBe(403);
    const guest = pool[2]!;
    expect((await api.post(`/projects/${project.id}/members`, { user_id: guest.user.id, access_level: 10 }, { token: dev.token })).status).toBe(201);
  });
});

// ───────────────────────────── Inheritance ─────────────────────────────

describe('GET /:sources/:id/members/all (inherited through two levels of subgroups)', () => {
  let top: any, mid: any, leaf: any, project: any;
  let alice: any, bob: any, carol: any, dave: any, erin: any;

  beforeAll(async () => {
    [alice, bob, carol, dave, erin] = pool;
    top = await createGroup(api, { token: owner.token });
    mid = await createGroup(api, { token: owner.token, parent: top });
    leaf = await createGroup(api, { token: owner.token, parent: mid });
    project = await createProject(api, { token: owner.token, group: leaf });
    await addMember(api, 'groups', top.id, alice.user.id, 10);
    await addMember(api, 'groups', top.id, bob.user.id, 20);
    await addMember(api, 'groups', mid.id, alice.user.id, 30);
    await addMember(api, 'groups', leaf.id, bob.user.id, 40);
    await addMember(api, 'groups', leaf.id, carol.user.id, 20);
    await addMember(api, 'projects', project.id, alice.user.id, 40);
    await addMember(api, 'projects', project.id, dave.user.id, 30);
  });

  const levels = (res: any) => Object.fromEntries(res.body.map((m: any) => [m.username, m.access_level]));

  it("gives a project its own membership first, else the nearest ancestor group's", async () => {
    const res = await api.get(`/projects/${project.id}/members/all`, { token: dave.token });
    expect(res.status).toBe(200);
    expect(levels(res)).toEqual({
      [owner.user.username]: 50,
      [alice.user.username]: 40,
      [bob.user.username]: 40,
      [carol.user.username]: 20,
      [dave.user.username]: 30,
    });
    expect(res.body).toHaveLength(5);
    expect(Object.keys(res.body[0])).toEqual(MEMBER_KEYS);
    expect(res.headers.get('x-total')).toBe('5');
    const direct = await api.get(`/projects/${project.id}/members`);
    expect(direct.body.map((m: any) => m.username).sort()).toEqual([alice.user.username, dave.user.username].sort());
  });

  it("gives a group its own members, then its ancestors' (one row per user)", async () => {
    expect(levels(await api.get(`/groups/${leaf.id}/members/all`))).toEqual({
      [owner.user.username]: 50,
      [alice.user.username]: 30,
      [bob.user.username]: 40,
      [carol.user.username]: 20,
    });
    expect(levels(await api.get(`/groups/${mid.id}/members/all`))).toEqual({
      [owner.user.username]: 50,
      [alice.user.username]: 30,
      [bob.user.username]: 20,
    });
    expect(levels(await api.get(`/groups/${top.id}/members/all`))).toEqual({
      [owner.user.username]: 50,
      [alice.user.username]: 10,
      [bob.user.username]: 20,
    });
  });

  it('filters and paginates the inherited list', async () => {
    const filtered = await api.get(`/projects/${project.id}/members/all`, { query: { user_ids: [bob.user.id, carol.user.id] } });
    expect(levels(filtered)).toEqual({ [bob.user.username]: 40, [carol.user.username]: 20 });
    const searched = await api.get(`/groups/${leaf.id}/members/all`, { query: { query: alice.user.username } });
    expect(levels(searched)).toEqual({ [alice.user.username]: 30 });
    const page = await api.get(`/projects/${project.id}/members/all`, { query: { per_page: 2, page: 3 } });
    expect(page.body).toHaveLength(1);
    expect(page.headers.get('x-total-pages')).toBe('3');
  });

  it('shows one inherited member with GET .../members/all/:user_id', async () => {
    const res = await api.get(`/projects/${project.id}/members/all/${carol.user.id}`, { token: carol.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(memberOf(carol.user, 20));
    expect((await api.get(`/groups/${leaf.id}/members/all/${alice.user.id}`)).body.access_level).toBe(30);
    expect((await api.get(`/projects/${project.id}/members/${carol.user.id}`)).status).toBe(404);
    const stranger = await api.get(`/projects/${project.id}/members/all/${erin.user.id}`);
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual({ message: '404 Not found' });
  });

  it('lets inherited members see private subgroups and projects, and nobody else', async () => {
    expect((await api.get(`/projects/${project.id}/members/all`, { token: alice.token })).status).toBe(200);
    expect((await api.get(`/groups/${leaf.id}/members`, { token: alice.token })).status).toBe(200);
    expect((await api.get(`/groups/${leaf.id}/members`, { token: erin.token })).status).toBe(404);
    expect((await api.get(`/projects/${project.id}/members/all`, { token: erin.token })).status).toBe(404);
  });
});

// ───────────────────────────── Deletions elsewhere ─────────────────────────────

describe('memberships of deleted users and groups', () => {
  it('refuses to soft-delete a sole group owner (409) and drops the memberships of a deleted user', async () => {
    const [founder, leaver] = await Promise.all([api.createUser(), api.createUser()]);
    const group = await createGroup(api, { token: founder.token });
    const soft = await api.del(`/users/${founder.user.id}`);
    expect(soft.status).toBe(409);
    expect(soft.body).toEqual({ message: 'User cannot be removed while is the sole-owner of a group' });

    await addMember(api, 'groups', group.id, leaver.user.id, 50);
    const project = await createProject(api, { token: founder.token });
    await addMember(api, 'projects', project.id, leaver.user.id, 30);
    // Two owners: neither is a sole owner now.
    expect((await api.del(`/users/${leaver.user.id}`)).status).toBe(204);
    const rows = await api.handle.db.selectFrom('members').selectAll().where('user_id', '=', leaver.user.id).execute();
    expect(rows).toEqual([]);
    expect((await api.get(`/groups/${group.id}/members`)).body.map((m: any) => m.id)).toEqual([founder.user.id]);
    // The founder is a sole owner again; the departed owner is not counted.
    expect((await api.put(`/groups/${group.id}/members/${founder.user.id}`, { access_level: 40 })).status).toBe(403);
  });

  it('drops the memberships of a deleted group', async () => {
    const group = await createGroup(api, { token: owner.token });
    const alice = pool[0]!;
    await addMember(api, 'groups', group.id, alice.user.id, 30);
    const res = await api.del(`/groups/${group.id}`, { token: owner.token });
    expect(res.status).toBe(202);
    const count = () =>
      api.handle.db.selectFrom('members').select('user_id').where('source_type', '=', 'Namespace').where('source_id', '=', group.id).execute();
    for (let i = 0; i < 100 && (await count()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await count()).toEqual([]);
  });

  it('drops the memberships of a deleted project', async () => {
    const project = await createProject(api, { token: owner.token, group: await createGroup(api, { token: owner.token }) });
    await addMember(api, 'projects', project.id, pool[0]!.user.id, 30);
    expect((await api.del(`/projects/${project.id}`, { token: owner.token })).status).toBe(202);
    const count = () =>
      api.handle.db.selectFrom('members').select('user_id').where('source_type', '=', 'Project').where('source_id', '=', project.id).execute();
    for (let i = 0; i < 100 && (await count()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await count()).toEqual([]);
  });

  it('rebuilds the same rows from the log (replay equivalence)', async () => {
    await expectReplayEquivalence(api.handle, [membersProjector]);
  });
});

/**
 * Who may list and manage members (GitLab: listing needs a signed-in caller who sees the
 * source; managing needs owner on groups, maintainer on projects, or admin; a source the
 * caller cannot see is 404, never 403). On a public source only outsiders fare differently.
 */
describe('permissions', () => {
  type Visibility = 'private' | 'public';

  // prettier-ignore
  const GROUPS: MatrixTable<Role, Visibility> = {
    'GET /groups/:id/members':              { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200 } },
    'GET /groups/:id/members/all':          { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200 } },
    'GET /groups/:id/members/:user_id':     { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200 } },
    'POST /groups/:id/members':             { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403 } },
    'PUT /groups/:id/members/:user_id':     { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403 } },
    'DELETE /groups/:id/members/:user_id':  { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403 } },
    'GET /groups/:id/access_requests':      { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403 } },
  };

  // Projects: maintainers manage members too.
  // prettier-ignore
  const PROJECTS: MatrixTable<Role, Visibility> = {
    'GET /projects/:id/members':             { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200 } },
    'GET /projects/:id/members/all':         { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200 } },
    'GET /projects/:id/members/:user_id':    { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200 } },
    'POST /projects/:id/members':            { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403 } },
    'PUT /projects/:id/members/:user_id':    { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403 } },
    'DELETE /projects/:id/members/:user_id': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 204, owner: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403 } },
    'GET /projects/:id/access_requests':     { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403 } },
  };

  let callers: Callers;
  const sources = new Map<string, number>();
  /** A member of every source that refused calls may aim at (a successful call gets a fresh user). */
  let subjectId: number;

  beforeAll(async () => {
    callers = await createCallers(api);
    targets = await Promise.all(Array.from({ length: 16 }, createTarget));
    subjectId = await newUserId();
    for (const kind of ['groups', 'projects'] as const) {
      for (const visibility of ['private', 'public'] as const) {
        // groups: the owner created the group; projects: the owner owns the project's group.
        const id = await sourceWithRoles(api, callers, kind, visibility);
        sources.set(`${kind}:${visibility}`, id);
        await addMember(api, kind, id, subjectId, 10);
      }
    }
  });

  let counter = 0;
  /** A user without a token (one request). */
  async function createTarget(): Promise<number> {
    const username = `target${++counter}_${process.pid}`;
    const res = await api.post('/users', { email: `${username}@example.com`, username, name: username, password: 'password123', skip_confirmation: true });
    return res.body.id;
  }
  /** Targets of the calls that succeed, made up front in parallel (each hashes a password). */
  let targets: number[] = [];
  async function newUserId(): Promise<number> {
    return targets.pop() ?? (await createTarget());
  }

  /** A member to change or remove: somebody else, a fresh one when the call should succeed. */
  async function target(kind: Kind, id: number, fresh: boolean): Promise<number> {
    if (!fresh) return subjectId;
    const userId = await newUserId();
    await addMember(api, kind, id, userId, 10);
    return userId;
  }

  interface Operation {
    /** The status of a call that is allowed. */
    ok: number;
    /** `fresh`: the call is expected to succeed and needs a target of its own. */
    run(kind: Kind, id: number, token: string | null, fresh: boolean): Promise<number>;
  }

  /** The calls, by method and the path below /:kind/:id/. */
  const OPERATIONS: Record<string, Operation> = {
    'GET members': { ok: 200, run: async (k, id, token) => (await api.get(`/${k}/${id}/members`, { token })).status },
    'GET members/all': { ok: 200, run: async (k, id, token) => (await api.get(`/${k}/${id}/members/all`, { token })).status },
    'GET members/:user_id': {
      ok: 200,
      run: async (k, id, token) => {
        const [first] = (await api.get(`/${k}/${id}/members`)).body;
        return (await api.get(`/${k}/${id}/members/${first.id}`, { token })).status;
      },
    },
    'POST members': {
      ok: 201,
      run: async (k, id, token, fresh) => (await api.post(`/${k}/${id}/members`, { user_id: fresh ? await newUserId() : callers.nonMember.user!.id, access_level: 10 }, { token })).status,
    },
    'PUT members/:user_id': {
      ok: 200,
      run: async (k, id, token, fresh) => (await api.put(`/${k}/${id}/members/${await target(k, id, fresh)}`, { access_level: 20 }, { token })).status,
    },
    'DELETE members/:user_id': {
      ok: 204,
      run: async (k, id, token, fresh) => (await api.del(`/${k}/${id}/members/${await target(k, id, fresh)}`, { token })).status,
    },
    'GET access_requests': { ok: 200, run: async (k, id, token) => (await api.get(`/${k}/${id}/access_requests`, { token })).status },
  };

  describe.each([
    ['groups', GROUPS],
    ['projects', PROJECTS],
  ] as const)('%s', (kind, table) => {
    permissionMatrix(table, async ({ endpoint, caller, visibility, status }) => {
      const [method, path] = endpoint.split(' ') as [string, string];
      const operation = OPERATIONS[`${method} ${path.slice(`/${kind}/:id/`.length)}`];
      expect(operation, endpoint).toBeDefined();
      const id = sources.get(`${kind}:${visibility}`)!;
      // A call that should succeed and changes members acts on a fresh member of its own.
      const fresh = status === operation!.ok && method !== 'GET';
      return operation!.run(kind, id, callers[caller].token, fresh);
    });
  });
});
