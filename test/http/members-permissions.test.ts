import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMemberAs, createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Who may list and manage members (GitLab: listing needs a signed-in caller who sees the
 * source; managing needs owner on groups, maintainer on projects, or admin; a source the
 * caller cannot see is 404, never 403).
 */

let api: TestServer;

type Kind = 'groups' | 'projects';
type Role = 'anonymous' | 'non-member' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
const ROLES: Role[] = ['anonymous', 'non-member', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const LEVEL: Partial<Record<Role, number>> = { guest: 10, reporter: 20, developer: 30, maintainer: 40 };

const tokens = new Map<Role, string | null>();
const sources = new Map<string, number>();
/** A member of every source that refused calls may aim at (a successful call gets a fresh user). */
let subjectId: number;
let outsiderId: number;

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  const [owner, outsider, ...members] = await Promise.all([0, 1, 2, 3, 4, 5].map(() => api.createUser()));
  tokens.set('anonymous', null);
  tokens.set('non-member', outsider!.token);
  tokens.set('owner', owner!.token);
  tokens.set('admin', api.rootToken);
  outsiderId = outsider!.user.id;
  targets = await Promise.all(Array.from({ length: 16 }, createTarget));
  subjectId = await newUserId();
  for (const visibility of ['private', 'public'] as const) {
    // groups: the owner created the group; projects: the owner owns the project's group.
    const group = await createGroup(api, { token: owner!.token, visibility });
    const projectGroup = await createGroup(api, { token: owner!.token, visibility });
    const project = await createProject(api, { token: owner!.token, group: projectGroup, visibility });
    sources.set(`groups:${visibility}`, group.id);
    sources.set(`projects:${visibility}`, project.id);
    for (const [i, role] of (['guest', 'reporter', 'developer', 'maintainer'] as const).entries()) {
      const member = members[i]!;
      tokens.set(role, member.token);
      await addMemberAs(api, 'groups', group.id, member.user.id, LEVEL[role]!);
      await addMemberAs(api, 'projects', project.id, member.user.id, LEVEL[role]!);
    }
    await addMemberAs(api, 'groups', group.id, subjectId, 10);
    await addMemberAs(api, 'projects', project.id, subjectId, 10);
  }
});
afterAll(() => api.close());

const manages = (kind: Kind, role: Role) => role === 'owner' || role === 'admin' || (kind === 'projects' && role === 'maintainer');

/** The status each role gets, given what a signed-in member or manager would get. */
function expected(kind: Kind, visibility: 'private' | 'public', role: Role, ok: number, managersOnly: boolean): number {
  if (role === 'anonymous') return 401;
  if (role === 'non-member' && visibility === 'private') return 404;
  if (managersOnly && !manages(kind, role)) return 403;
  return ok;
}

interface Operation {
  name: string;
  ok: number;
  managersOnly: boolean;
  /** `fresh`: the call is expected to succeed and needs a target of its own. */
  run(kind: Kind, id: number, token: string | null, fresh: boolean): Promise<number>;
}

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

/** A member to change or remove: a fresh one when the call should succeed. */
async function target(kind: Kind, id: number, fresh: boolean): Promise<number> {
  if (!fresh) return subjectId;
  const userId = await newUserId();
  await addMemberAs(api, kind, id, userId, 10);
  return userId;
}

const OPERATIONS: Operation[] = [
  { name: 'GET members', ok: 200, managersOnly: false, run: async (k, id, token) => (await api.get(`/${k}/${id}/members`, { token })).status },
  { name: 'GET members/all', ok: 200, managersOnly: false, run: async (k, id, token) => (await api.get(`/${k}/${id}/members/all`, { token })).status },
  {
    name: 'GET members/:user_id',
    ok: 200,
    managersOnly: false,
    run: async (k, id, token) => {
      const [first] = (await api.get(`/${k}/${id}/members`)).body;
      return (await api.get(`/${k}/${id}/members/${first.id}`, { token })).status;
    },
  },
  {
    name: 'POST members',
    ok: 201,
    managersOnly: true,
    run: async (k, id, token, fresh) => (await api.post(`/${k}/${id}/members`, { user_id: fresh ? await newUserId() : outsiderId, access_level: 10 }, { token })).status,
  },
  {
    name: 'PUT members/:user_id',
    ok: 200,
    managersOnly: true,
    run: async (k, id, token, fresh) => (await api.put(`/${k}/${id}/members/${await target(k, id, fresh)}`, { access_level: 20 }, { token })).status,
  },
  {
    name: 'DELETE members/:user_id (somebody else)',
    ok: 204,
    managersOnly: true,
    run: async (k, id, token, fresh) => (await api.del(`/${k}/${id}/members/${await target(k, id, fresh)}`, { token })).status,
  },
  { name: 'GET access_requests', ok: 200, managersOnly: true, run: async (k, id, token) => (await api.get(`/${k}/${id}/access_requests`, { token })).status },
];

describe.each<Kind>(['groups', 'projects'])('%s', (kind) => {
  describe.each(['private', 'public'] as const)('%s', (visibility) => {
    // On a public source only outsiders fare differently.
    const roles = visibility === 'private' ? ROLES : (['anonymous', 'non-member'] as Role[]);
    const cases = OPERATIONS.flatMap((op) => roles.map((role) => ({ op, role, want: expected(kind, visibility, role, op.ok, op.managersOnly) })));
    it.each(cases.map((c) => [c.op.name, c.role, c.want, c] as const))('%s as %s → %i', async (_name, role, want, c) => {
      const id = sources.get(`${kind}:${visibility}`)!;
      expect(await c.op.run(kind, id, tokens.get(role)!, want === c.op.ok && c.op.managersOnly)).toBe(want);
    });
  });
});
