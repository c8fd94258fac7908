import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';

/**
 * Who may manage a project's deploy keys (GitLab: `authenticate!`, then
 * `authorize_admin_project` — maintainers, owners and administrators; a project the caller
 * cannot see is 404, never 403), and who may list every key (administrators).
 */

type Visibility = 'private' | 'public';

const BELOW_MAINTAINER = { guest: 403, reporter: 403, developer: 403 } as const;

// prettier-ignore
const TABLE: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/deploy_keys':                    { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 200 } },
  'GET /projects/:id/deploy_keys/:key_id':            { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 200 } },
  'POST /projects/:id/deploy_keys':                   { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 201 } },
  'PUT /projects/:id/deploy_keys/:key_id':            { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 200 } },
  'DELETE /projects/:id/deploy_keys/:key_id':         { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 204, owner: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 204 } },
  'POST /projects/:id/deploy_keys/:key_id/enable':    { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 201 } },
};

let api: TestServer;
let callers: Callers;
const projects = new Map<Visibility, number>();
/** A key enabled in each project, the target of calls that change nothing. */
const seeded = new Map<Visibility, number>();
/** A project every member role belongs to, where keys to enable come from. */
let origin: number;

/** A new key, made by root in `projectId`. */
async function newKey(projectId: number): Promise<number> {
  const res = await api.post(`/projects/${projectId}/deploy_keys`, { title: 'made by root', key: sshPublicKey() });
  if (res.status !== 201) throw new Error(`POST deploy_keys: ${res.status} ${res.text}`);
  return res.body.id;
}

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
  origin = await sourceWithRoles(api, callers, 'projects', 'private');
  for (const visibility of ['private', 'public'] as const) {
    const id = await sourceWithRoles(api, callers, 'projects', visibility);
    projects.set(visibility, id);
    seeded.set(visibility, await newKey(id));
  }
});
afterAll(() => api.close());

describe('/projects/:id/deploy_keys', () => {
  permissionMatrix(TABLE, async ({ endpoint, caller, visibility, status }) => {
    const id = projects.get(visibility)!;
    const token = callers[caller].token;
    const succeeds = status < 400;
    const base = `/projects/${id}/deploy_keys`;
    switch (endpoint) {
      case 'GET /projects/:id/deploy_keys':
        return (await api.get(base, { token })).status;
      case 'GET /projects/:id/deploy_keys/:key_id':
        return (await api.get(`${base}/${seeded.get(visibility)}`, { token })).status;
      case 'POST /projects/:id/deploy_keys':
        return (await api.post(base, { title: caller, key: sshPublicKey() }, { token })).status;
      case 'PUT /projects/:id/deploy_keys/:key_id':
        return (await api.put(`${base}/${seeded.get(visibility)}`, { title: caller }, { token })).status;
      case 'DELETE /projects/:id/deploy_keys/:key_id':
        return (await api.del(`${base}/${succeeds ? await newKey(id) : seeded.get(visibility)}`, { token })).status;
      case 'POST /projects/:id/deploy_keys/:key_id/enable':
        return (await api.post(`${base}/${await newKey(origin)}/enable`, undefined, { token })).status;
      default:
        throw new Error(`no call for ${endpoint}`);
    }
  });
});

describe('GET /deploy_keys', () => {
  it.each<[Role, number]>([
    ['anonymous', 401],
    ['nonMember', 403],
    ['maintainer', 403],
    ['owner', 403],
    ['admin', 200],
  ])('as %s → %i', async (role, status) => {
    expect((await api.get('/deploy_keys', { token: callers[role].token })).status).toBe(status);
  });
});
