import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { ROLE_LEVEL, createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The visibility/role matrix of projects: who sees a project (GET, lists), what the record
 * shows them (default branch, runners token), who administers it (PUT) and who has owner
 * rights (archive) — for every kind of caller, on public, internal and private projects, in a
 * personal namespace (roles as project memberships) and at the bottom of two levels of
 * subgroups (roles granted on the top group only, so they arrive through inheritance).
 */

let api: TestServer;
afterAll(() => api.close());

type Caller = Exclude<Role, 'blocked'>;
const CALLERS: Caller[] = ['anonymous', 'nonMember', 'external', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const VISIBILITIES: Visibility[] = ['public', 'internal', 'private'];
type Place = 'personal namespace' | 'grandchild group';

let callers: Callers;
const projects = {} as Record<Place, Record<Visibility, number>>;
const tops = {} as Record<Visibility, number>;

beforeAll(async () => {
  api = await startTestServer();
  callers = await createCallers(api, { prefix: 'v' });
  projects['personal namespace'] = {} as Record<Visibility, number>;
  projects['grandchild group'] = {} as Record<Visibility, number>;
  for (const visibility of VISIBILITIES) {
    // The owner's personal project: its owner is the namespace owner; the others are project members.
    const own = await api.post('/projects', { name: `Own ${visibility}`, visibility }, { token: callers.owner.token });
    projects['personal namespace'][visibility] = own.body.id;
    await grantRoles(api, callers, { projects: own.body.id });

    // Created by root; the callers' only memberships are on the top group.
    const top = await api.post('/groups', { name: `Top ${visibility}`, path: `v-top-${visibility}`, visibility });
    const child = await api.post('/groups', { name: 'Child', path: 'child', parent_id: top.body.id, visibility });
    const grandchild = await api.post('/groups', { name: 'Grandchild', path: 'grandchild', parent_id: child.body.id, visibility });
    const deep = await api.post('/projects', { name: 'Deep', namespace_id: grandchild.body.id, visibility, initialize_with_readme: true });
    projects['grandchild group'][visibility] = deep.body.id;
    tops[visibility] = top.body.id;
    await grantRoles(api, callers, { groups: top.body.id }, { owner: true });
  }
});

const role = (caller: Caller): number => (ROLE_LEVEL as Record<string, number>)[caller] ?? 0;
/** GitLab: anonymous callers see public projects, signed-in non-external users internal ones, members and admins all. */
function canSee(caller: Caller, visibility: Visibility): boolean {
  if (caller === 'admin' || role(caller) > 0) return true;
  if (visibility === 'public') return true;
  return visibility === 'internal' && caller === 'nonMember';
}
/** admin_project: maintainers (the personal namespace's owner is one) and admins. */
const administers = (caller: Caller) => caller === 'admin' || role(caller) >= 40;
/** download_code: reporters and up, admins, and anyone the project is open to. */
const downloadsCode = (caller: Caller, visibility: Visibility) =>
  caller === 'admin' || role(caller) >= 20 || visibility === 'public' || (visibility === 'internal' && caller !== 'anonymous' && caller !== 'external');

// The same in a personal namespace and two groups down (roles inherited from the top group).
// prettier-ignore
const PROJECTS: MatrixTable<Caller, Visibility> = {
  'GET /projects/:id': {
    public:   { anonymous: 200, nonMember: 200, external: 200, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
    internal: { anonymous: 404, nonMember: 200, external: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
    private:  { anonymous: 404, nonMember: 404, external: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
  },
  'PUT /projects/:id': {
    public:   { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 },
    internal: { anonymous: 401, nonMember: 403, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 },
    private:  { anonymous: 401, nonMember: 404, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 },
  },
  // Owner rights: the namespace's owner or a group owner, and admins (unarchived again after a 201).
  'POST /projects/:id/archive': {
    public:   { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 201, admin: 201 },
    internal: { anonymous: 401, nonMember: 403, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 201, admin: 201 },
    private:  { anonymous: 401, nonMember: 404, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 201, admin: 201 },
  },
  // Everyone who sees the project but is not its owner is refused its removal (owners are not asked).
  'DELETE /projects/:id': {
    public:   { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: 403, developer: 403, maintainer: 403 },
    internal: { anonymous: 401, nonMember: 403, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403 },
    private:  { anonymous: 401, nonMember: 404, external: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403 },
  },
};

describe.each(['personal namespace', 'grandchild group'] as Place[])('a project in a %s', (place) => {
  permissionMatrix(PROJECTS, async ({ endpoint, caller, visibility }) => {
    const token = callers[caller].token;
    const id = projects[place][visibility];
    switch (endpoint) {
      case 'GET /projects/:id': {
        const got = await api.get(`/projects/${id}`, { token });
        if (got.status === 404) expect(got.body).toEqual({ message: '404 Project Not Found' });
        if (got.status === 200) {
          expect('_links' in got.body, 'full record').toBe(caller !== 'anonymous');
          if (place === 'grandchild group') expect('default_branch' in got.body, 'default_branch').toBe(downloadsCode(caller, visibility));
          expect('runners_token' in got.body, 'runners_token').toBe(caller !== 'anonymous' && administers(caller));
        }
        return got.status;
      }
      case 'PUT /projects/:id':
        return (await api.put(`/projects/${id}`, { description: `by ${caller}` }, { token })).status;
      case 'POST /projects/:id/archive': {
        const archived = await api.post(`/projects/${id}/archive`, undefined, { token });
        if (archived.status === 201) expect((await api.post(`/projects/${id}/unarchive`, undefined, { token })).status).toBe(201);
        return archived.status;
      }
      case 'DELETE /projects/:id':
        return (await api.del(`/projects/${id}`, { token })).status;
    }
    throw new Error(`no call for ${endpoint}`);
  });

  describe.each(VISIBILITIES)('the lists, %s', (visibility) => {
    it.each(CALLERS)('as %s', async (caller) => {
      const token = callers[caller].token;
      const id = projects[place][visibility];
      const visible = canSee(caller, visibility);
      const listed = await api.get('/projects', { token, query: { per_page: 100 } });
      expect(listed.body.map((p: { id: number }) => p.id).includes(id), 'GET /projects').toBe(visible);
      if (place === 'grandchild group') {
        const inGroup = await api.get(`/groups/${tops[visibility]}/projects`, { token, query: { include_subgroups: true } });
        if (inGroup.status === 200) expect(inGroup.body.map((p: { id: number }) => p.id).includes(id), 'GET /groups/:id/projects').toBe(visible);
        else expect(visible).toBe(false);
      }
    });
  });
});
