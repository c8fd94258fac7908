import { afterAll, beforeAll } from 'vitest';
import { settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Who may read and manage protected branches (GitLab: `before { authorize_admin_project }`
 * on every endpoint, reads included — maintainers, owners and administrators; a project the
 * caller cannot see is 404, one they see without the ability 403, anonymous callers too).
 */

type Visibility = 'private' | 'public';

const outsiders = (ok: number) => ({
  private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: ok, owner: ok, admin: ok },
  public: { anonymous: 403, nonMember: 403 },
});

const TABLE: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/protected_branches': outsiders(200),
  'GET /projects/:id/protected_branches/:name': outsiders(200),
  'POST /projects/:id/protected_branches': outsiders(201),
  'PATCH /projects/:id/protected_branches/:name': outsiders(200),
  'DELETE /projects/:id/protected_branches/:name': outsiders(204),
};

let api: TestServer;
let callers: Callers;
const projects = new Map<Visibility, number>();
let counter = 0;

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
  for (const visibility of ['private', 'public'] as const) projects.set(visibility, await sourceWithRoles(api, callers, 'projects', visibility));
});
afterAll(() => api.close());

permissionMatrix(TABLE, async ({ endpoint, caller, visibility }) => {
  const [method, path] = endpoint.split(' ') as [string, string];
  const project = projects.get(visibility)!;
  const name = `matrix-${++counter}/*`;
  // Each call gets its own protected branch, made by root (POST makes it itself).
  if (method !== 'POST') {
    const made = await api.post(`/projects/${project}/protected_branches`, { name });
    if (made.status !== 201) throw new Error(`POST protected_branches: ${made.status} ${made.text}`);
  }
  const url = path.replace(':id', String(project)).replace(':name', encodeURIComponent(name));
  const token = callers[caller].token;
  const res = await api.request(method, url, { token, ...(method === 'POST' ? { body: { name } } : method === 'PATCH' ? { body: { code_owner_approval_required: true } } : {}) });
  return res.status;
});
