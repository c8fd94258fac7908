import { afterAll, beforeAll, describe, expect } from 'vitest';
import { settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { addMember, createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Who may list and manage members (GitLab: listing needs a signed-in caller who sees the
 * source; managing needs owner on groups, maintainer on projects, or admin; a source the
 * caller cannot see is 404, never 403). On a public source only outsiders fare differently.
 */

type Kind = 'groups' | 'projects';
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

let api: TestServer;
let callers: Callers;
const sources = new Map<string, number>();
/** A member of every source that refused calls may aim at (a successful call gets a fresh user). */
let subjectId: number;

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
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
afterAll(() => api.close());

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
