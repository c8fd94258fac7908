import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { addMember } from '../support/fixtures.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The visibility/role matrix of groups: who sees a group (GET), administers it (PUT, runners
 * token) and creates subgroups in it — for every kind of caller, on public, internal and
 * private trees, with roles granted on the top group only, so the child and grandchild
 * answer through inheritance.
 */

let api: TestServer;
afterAll(() => api.close());

type Caller = Exclude<Role, 'blocked'>;
const CALLERS: Caller[] = ['anonymous', 'nonMember', 'external', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const VISIBILITIES: Visibility[] = ['public', 'internal', 'private'];

let callers: Callers;
/** trees[visibility] = [top, child, grandchild] ids */
const trees = {} as Record<Visibility, [number, number, number]>;

beforeAll(async () => {
  api = await startTestServer();
  callers = await createCallers(api, { prefix: 'm' });
  for (const visibility of VISIBILITIES) {
    // Created by root, so the callers' only memberships are the ones granted below on the top group.
    const top = await api.post('/groups', { name: `Top ${visibility}`, path: `top-${visibility}`, visibility });
    const child = await api.post('/groups', { name: 'Child', path: 'child', parent_id: top.body.id, visibility });
    const grandchild = await api.post('/groups', { name: 'Grandchild', path: 'grandchild', parent_id: child.body.id, visibility });
    trees[visibility] = [top.body.id, child.body.id, grandchild.body.id];
    await grantRoles(api, callers, { groups: top.body.id }, { owner: true });
  }
});

const MEMBERS: readonly Caller[] = ['guest', 'reporter', 'developer', 'maintainer', 'owner'];
const isMember = (caller: Caller) => MEMBERS.includes(caller);
/** GitLab: anonymous callers see public groups, signed-in (non-external) users internal ones, members and admins all. */
function canSee(caller: Caller, visibility: Visibility): boolean {
  if (caller === 'admin' || isMember(caller)) return true;
  if (visibility === 'public') return true;
  return visibility === 'internal' && caller === 'nonMember';
}
const administers = (caller: Caller) => caller === 'owner' || caller === 'admin';

// GET: 200 or 404 (hidden); the same for the top group, its child and grandchild.
// prettier-ignore
const READ = {
  public:   { anonymous: 200, nonMember: 200, external: 200, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
  internal: { anonymous: 404, nonMember: 200, external: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
  private:  { anonymous: 404, nonMember: 404, external: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
};

// prettier-ignore
const GROUPS: MatrixTable<Caller, Visibility> = {
  'GET /groups/:id (top)': READ,
  'GET /groups/:id (child)': READ,
  'GET /groups/:id (grandchild)': READ,
  // Administration of the grandchild, two levels below the membership.
  'PUT /groups/:id (grandchild)': {
    public:   { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 },
    internal: { anonymous: 401, nonMember: 403, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 },
    private:  { anonymous: 401, nonMember: 404, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 },
  },
  // Subgroup creation in the child (subgroup_creation_level defaults to maintainer).
  'POST /groups (parent_id: child)': {
    public:   { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 201, admin: 201 },
    internal: { anonymous: 401, nonMember: 403, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 201, admin: 201 },
    private:  { anonymous: 401, nonMember: 404, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 201, admin: 201 },
  },
};

const WHICH = { top: 0, child: 1, grandchild: 2 } as const;

describe('the matrix', () => {
  permissionMatrix(GROUPS, async ({ endpoint, caller, visibility }) => {
    const token = callers[caller].token;
    const [, child, grandchild] = trees[visibility];
    if (endpoint.startsWith('GET')) {
      const id = trees[visibility][WHICH[endpoint.match(/\((\w+)\)/)![1] as keyof typeof WHICH]];
      const res = await api.get(`/groups/${id}`, { token });
      if (res.status === 404) expect(res.body).toEqual({ message: '404 Group Not Found' });
      if (res.status === 200) {
        expect(res.body.id).toBe(id);
        expect('runners_token' in res.body, `runners_token of ${id}`).toBe(administers(caller));
      }
      return res.status;
    }
    if (endpoint.startsWith('PUT')) return (await api.put(`/groups/${grandchild}`, { description: `by ${caller}` }, { token })).status;
    const path = `new-${caller.toLowerCase()}`;
    const post = await api.post('/groups', { name: 'New', path, parent_id: child }, { token });
    if (post.status === 201) expect(post.body.full_path).toBe(`top-${visibility}/child/${path}`);
    return post.status;
  });
});

describe.each(VISIBILITIES)('the lists, on a %s tree', (visibility) => {
  it.each(CALLERS)('as %s', async (caller) => {
    const token = callers[caller].token;
    const [top, child, grandchild] = trees[visibility];
    const visible = canSee(caller, visibility);
    // Members see their trees (top, child, grandchild and below); others only with all_available.
    const listed = (await api.get('/groups', { token, query: { search: `top-${visibility}`, per_page: 100 } })).body.map((g: any) => g.id);
    const available = (await api.get('/groups', { token, query: { all_available: true, per_page: 100 } })).body.map((g: any) => g.id);
    const inDefaultList = caller === 'admin' || isMember(caller) || (caller === 'anonymous' && visibility === 'public');
    expect(listed.includes(top), 'listed').toBe(inDefaultList);
    for (const id of [top, child, grandchild]) expect(available.includes(id), `all_available ${id}`).toBe(visible);
  });
});

describe('a member of a grandchild only', () => {
  it('lists its ancestors (GitLab’s GroupsFinder) but reads only what its membership covers', async () => {
    const { user, token } = await api.createUser({ username: 'm-deep' });
    const [top, child, grandchild] = trees.private;
    await addMember(api, 'groups', grandchild, user.id, 30);
    const listed = (await api.get('/groups', { token, query: { per_page: 100 } })).body.map((g: any) => g.id);
    expect(listed).toEqual(expect.arrayContaining([top, child, grandchild]));
    expect((await api.get(`/groups/${grandchild}`, { token })).status).toBe(200);
    // GitLab 12's GroupPolicy has no rule for members of descendants (only has_projects).
    expect((await api.get(`/groups/${top}`, { token })).status).toBe(404);
  });
});
