import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { addMemberAs } from '../support/fixtures.js';
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

type ActorName = 'anonymous' | 'non-member' | 'external' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
const ROLES = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
const ACTORS: ActorName[] = ['anonymous', 'non-member', 'external', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const VISIBILITIES: Visibility[] = ['public', 'internal', 'private'];
type Place = 'personal namespace' | 'grandchild group';

const tokens = {} as Record<ActorName, string | null>;
const projects = {} as Record<Place, Record<Visibility, number>>;
const tops = {} as Record<Visibility, number>;

beforeAll(async () => {
  api = await startTestServer();
  tokens.anonymous = null;
  tokens['non-member'] = (await api.createUser({ username: 'v-nonmember' })).token;
  tokens.external = (await api.createUser({ username: 'v-external', external: true })).token;
  tokens.admin = (await api.createUser({ username: 'v-admin', admin: true })).token;
  const users = {} as Record<keyof typeof ROLES, number>;
  for (const name of Object.keys(ROLES) as (keyof typeof ROLES)[]) {
    const created = await api.createUser({ username: `v-${name}` });
    tokens[name] = created.token;
    users[name] = created.user.id;
  }
  projects['personal namespace'] = {} as Record<Visibility, number>;
  projects['grandchild group'] = {} as Record<Visibility, number>;
  for (const visibility of VISIBILITIES) {
    // The owner's personal project: its owner is the namespace owner; the others are project members.
    const own = await api.post('/projects', { name: `Own ${visibility}`, visibility }, { token: tokens.owner });
    projects['personal namespace'][visibility] = own.body.id;
    for (const role of ['guest', 'reporter', 'developer', 'maintainer'] as const) await addMemberAs(api, 'projects', own.body.id, users[role], ROLES[role]);

    // Created by root; the actors' only memberships are on the top group.
    const top = await api.post('/groups', { name: `Top ${visibility}`, path: `v-top-${visibility}`, visibility });
    const child = await api.post('/groups', { name: 'Child', path: 'child', parent_id: top.body.id, visibility });
    const grandchild = await api.post('/groups', { name: 'Grandchild', path: 'grandchild', parent_id: child.body.id, visibility });
    const deep = await api.post('/projects', { name: 'Deep', namespace_id: grandchild.body.id, visibility, initialize_with_readme: true });
    projects['grandchild group'][visibility] = deep.body.id;
    tops[visibility] = top.body.id;
    for (const role of Object.keys(ROLES) as (keyof typeof ROLES)[]) await addMemberAs(api, 'groups', top.body.id, users[role], ROLES[role]);
  }
});

const role = (actor: ActorName): number => (ROLES as Record<string, number>)[actor] ?? 0;
/** GitLab: anonymous callers see public projects, signed-in non-external users internal ones, members and admins all. */
function canSee(actor: ActorName, visibility: Visibility): boolean {
  if (actor === 'admin' || role(actor) > 0) return true;
  if (visibility === 'public') return true;
  return visibility === 'internal' && actor === 'non-member';
}
/** admin_project: maintainers (the personal namespace's owner is one) and admins. */
const administers = (actor: ActorName) => actor === 'admin' || role(actor) >= 40;
/** owner_access: the namespace's owner or a group owner, and admins. */
const owns = (actor: ActorName) => actor === 'owner' || actor === 'admin';
/** download_code: reporters and up, admins, and anyone the project is open to. */
const downloadsCode = (actor: ActorName, visibility: Visibility) =>
  actor === 'admin' || role(actor) >= 20 || visibility === 'public' || (visibility === 'internal' && actor !== 'anonymous' && actor !== 'external');

describe.each(['personal namespace', 'grandchild group'] as Place[])('a project in a %s', (place) => {
  describe.each(VISIBILITIES)('%s', (visibility) => {
    it.each(ACTORS)('as %s', async (actor) => {
      const token = tokens[actor];
      const id = projects[place][visibility];
      const visible = canSee(actor, visibility);

      const got = await api.get(`/projects/${id}`, { token });
      if (!visible) {
        expect(got.status).toBe(404);
        expect(got.body).toEqual({ message: '404 Project Not Found' });
      } else {
        expect(got.status).toBe(200);
        expect('_links' in got.body, 'full record').toBe(actor !== 'anonymous');
        if (place === 'grandchild group') expect('default_branch' in got.body, 'default_branch').toBe(downloadsCode(actor, visibility));
        expect('runners_token' in got.body, 'runners_token').toBe(actor !== 'anonymous' && administers(actor));
      }

      const listed = await api.get('/projects', { token, query: { per_page: 100 } });
      expect(listed.body.map((p: { id: number }) => p.id).includes(id), 'GET /projects').toBe(visible);
      if (place === 'grandchild group') {
        const inGroup = await api.get(`/groups/${tops[visibility]}/projects`, { token, query: { include_subgroups: true } });
        if (inGroup.status === 200) expect(inGroup.body.map((p: { id: number }) => p.id).includes(id), 'GET /groups/:id/projects').toBe(visible);
        else expect(visible).toBe(false);
      }

      const put = await api.put(`/projects/${id}`, { description: `by ${actor}` }, { token });
      expect(put.status, 'PUT').toBe(actor === 'anonymous' ? 401 : !visible ? 404 : administers(actor) ? 200 : 403);

      const archived = await api.post(`/projects/${id}/archive`, undefined, { token });
      expect(archived.status, 'archive').toBe(actor === 'anonymous' ? 401 : !visible ? 404 : owns(actor) ? 201 : 403);
      if (archived.status === 201) expect((await api.post(`/projects/${id}/unarchive`, undefined, { token })).status).toBe(201);

      // Everyone who sees the project but is not its owner is refused its removal.
      if (!owns(actor)) {
        const removed = await api.del(`/projects/${id}`, { token });
        expect(removed.status, 'DELETE').toBe(actor === 'anonymous' ? 401 : !visible ? 404 : 403);
      }
    });
  });
});
