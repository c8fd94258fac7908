import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The visibility/role matrix of groups: who sees a group (GET), administers it (PUT, runners
 * token) and creates subgroups in it — for every kind of caller, on public, internal and
 * private trees, with roles granted on the top group only, so the child and grandchild
 * answer through inheritance.
 */

let api: TestServer;
afterAll(() => api.close());

type ActorName = 'anonymous' | 'non-member' | 'external' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
const ROLES: Partial<Record<ActorName, number>> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 };
const ACTORS: ActorName[] = ['anonymous', 'non-member', 'external', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const VISIBILITIES: Visibility[] = ['public', 'internal', 'private'];

const tokens = {} as Record<ActorName, string | null>;
/** trees[visibility] = [top, child, grandchild] ids */
const trees = {} as Record<Visibility, [number, number, number]>;

beforeAll(async () => {
  api = await startTestServer();
  tokens.anonymous = null;
  tokens['non-member'] = (await api.createUser({ username: 'm-nonmember' })).token;
  tokens.external = (await api.createUser({ username: 'm-external', external: true })).token;
  tokens.admin = (await api.createUser({ username: 'm-admin', admin: true })).token;
  const users: Partial<Record<ActorName, number>> = {};
  for (const name of Object.keys(ROLES) as ActorName[]) {
    const created = await api.createUser({ username: `m-${name}` });
    tokens[name] = created.token;
    users[name] = created.user.id;
  }
  for (const visibility of VISIBILITIES) {
    // Created by root, so the actors' only memberships are the ones granted below on the top group.
    const top = await api.post('/groups', { name: `Top ${visibility}`, path: `top-${visibility}`, visibility });
    const child = await api.post('/groups', { name: 'Child', path: 'child', parent_id: top.body.id, visibility });
    const grandchild = await api.post('/groups', { name: 'Grandchild', path: 'grandchild', parent_id: child.body.id, visibility });
    trees[visibility] = [top.body.id, child.body.id, grandchild.body.id];
    for (const [name, level] of Object.entries(ROLES) as [ActorName, number][]) await member(top.body.id, users[name]!, level);
  }
});

/** A membership, added by root through the members API. */
async function member(groupId: number, userId: number, level: number) {
  const res = await api.post(`/groups/${groupId}/members`, { user_id: userId, access_level: level });
  if (res.status !== 201) throw new Error(`POST /groups/${groupId}/members ${res.status} ${res.text}`);
}

const isMember = (actor: ActorName) => ROLES[actor] !== undefined;
/** GitLab: anonymous callers see public groups, signed-in (non-external) users internal ones, members and admins all. */
function canSee(actor: ActorName, visibility: Visibility): boolean {
  if (actor === 'admin' || isMember(actor)) return true;
  if (visibility === 'public') return true;
  return visibility === 'internal' && actor === 'non-member';
}
const administers = (actor: ActorName) => actor === 'owner' || actor === 'admin';
/** subgroup_creation_level defaults to maintainer. */
const createsSubgroups = (actor: ActorName) => actor === 'maintainer' || administers(actor);

describe.each(VISIBILITIES)('a %s tree', (visibility) => {
  it.each(ACTORS)('as %s', async (actor) => {
    const token = tokens[actor];
    const [top, child, grandchild] = trees[visibility];
    const visible = canSee(actor, visibility);

    for (const id of [top, child, grandchild]) {
      const res = await api.get(`/groups/${id}`, { token });
      if (!visible) {
        expect(res.status, `GET ${id}`).toBe(404);
        expect(res.body).toEqual({ message: '404 Group Not Found' });
        continue;
      }
      expect(res.status, `GET ${id}`).toBe(200);
      expect(res.body.id).toBe(id);
      expect('runners_token' in res.body, `runners_token of ${id}`).toBe(administers(actor));
    }

    // Administration (PUT) of the grandchild, two levels below the membership.
    const put = await api.put(`/groups/${grandchild}`, { description: `by ${actor}` }, { token });
    const expectedPut = actor === 'anonymous' ? 401 : !visible ? 404 : administers(actor) ? 200 : 403;
    expect(put.status, 'PUT').toBe(expectedPut);

    // Subgroup creation in the child.
    const post = await api.post('/groups', { name: 'New', path: `new-${actor}`, parent_id: child }, { token });
    const expectedPost = actor === 'anonymous' ? 401 : !visible ? 404 : createsSubgroups(actor) ? 201 : 403;
    expect(post.status, 'POST subgroup').toBe(expectedPost);
    if (expectedPost === 201) expect(post.body.full_path).toBe(`top-${visibility}/child/new-${actor}`);

    // The list: members see their trees (top, child, grandchild and below); others only with all_available.
    const listed = (await api.get('/groups', { token, query: { search: `top-${visibility}`, per_page: 100 } })).body.map((g: any) => g.id);
    const available = (await api.get('/groups', { token, query: { all_available: true, per_page: 100 } })).body.map((g: any) => g.id);
    const inDefaultList = actor === 'admin' || isMember(actor) || (actor === 'anonymous' && visibility === 'public');
    expect(listed.includes(top), 'listed').toBe(inDefaultList);
    for (const id of [top, child, grandchild]) expect(available.includes(id), `all_available ${id}`).toBe(visible);
  });
});

describe('a member of a grandchild only', () => {
  it('lists its ancestors (GitLab’s GroupsFinder) but reads only what its membership covers', async () => {
    const { user, token } = await api.createUser({ username: 'm-deep' });
    const [top, child, grandchild] = trees.private;
    await member(grandchild, user.id, 30);
    const listed = (await api.get('/groups', { token, query: { per_page: 100 } })).body.map((g: any) => g.id);
    expect(listed).toEqual(expect.arrayContaining([top, child, grandchild]));
    expect((await api.get(`/groups/${grandchild}`, { token })).status).toBe(200);
    // GitLab 12's GroupPolicy has no rule for members of descendants (only has_projects).
    expect((await api.get(`/groups/${top}`, { token })).status).toBe(404);
  });
});
