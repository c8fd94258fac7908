import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, withScopes, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

type Visibility = 'private' | 'internal' | 'public';

// `before { authenticate! }` then `authorize_admin_project`: maintainers and owners; another's private project is 404.
const ROW = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200, blocked: 403, external: 404 };
const VISIBLE = { ...ROW, nonMember: 403, external: 403 };
const rows = (ok: number): MatrixTable<Role, Visibility>[string] => ({
  private: { ...ROW, maintainer: ok, owner: ok, admin: ok },
  internal: { ...VISIBLE, external: 404, maintainer: ok, owner: ok, admin: ok },
  public: { ...VISIBLE, maintainer: ok, owner: ok, admin: ok },
});
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/services': rows(200),
  'GET /projects/:id/integrations': rows(200),
  'GET /projects/:id/services/slack': rows(200),
  'PUT /projects/:id/services/slack': rows(200),
  'PUT /projects/:id/integrations/slack': rows(200),
  'DELETE /projects/:id/services/slack': rows(204),
  'DELETE /projects/:id/integrations/slack': rows(204),
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'internal', 'public'] as const) projects.set(visibility, await sourceWithRoles(api, callers, 'projects', visibility));
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const url = path.replace(':id', String(projects.get(visibility)!));
    const body = method === 'PUT' ? { webhook: 'https://93.184.216.34/hook' } : undefined;
    const res = await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}) });
    if (res.status === 404) expect(res.body).toEqual({ message: '404 Project Not Found' });
    return res.status;
  });

  it('needs the api scope: read_api or read_user tokens are refused', async () => {
    const projectId = projects.get('private')!;
    const reader = await withScopes(api, callers.maintainer, ['read_user']);
    expect((await api.get(`/projects/${projectId}/services/slack`, { token: reader.token })).status).toBe(403);
    expect((await api.put(`/projects/${projectId}/services/slack`, { webhook: 'https://93.184.216.34/' }, { token: reader.token })).status).toBe(403);
  });

  it('answers the project before the parameters: 404 and 403 come first', async () => {
    const projectId = projects.get('private')!;
    expect((await api.put(`/projects/${projectId}/services/slack`, {}, { token: callers.nonMember.token })).status).toBe(404);
    expect((await api.put(`/projects/${projectId}/services/slack`, {}, { token: callers.developer.token })).status).toBe(403);
    expect(await api.put(`/projects/${projectId}/services/slack`, {}, { token: callers.maintainer.token })).toMatchObject({ status: 400, body: { error: 'webhook is missing' } });
  });
});

describe('hostile input', () => {
  it('answers 4xx in GitLab form, never 500', async () => {
    const project = (await api.post('/projects', { name: 'hostile', path: `hostile${process.pid}` })).body;
    const put = (slug: string, body: unknown) => api.put(`/projects/${project.id}/services/${slug}`, body);
    expect(await put('slack', { webhook: ['https://93.184.216.34/'] })).toMatchObject({ status: 400, body: { error: 'webhook is invalid' } });
    expect(await put('slack', { webhook: { a: 1 } })).toMatchObject({ status: 400, body: { error: 'webhook is invalid' } });
    expect(await put('irker', { recipients: 'a', server_port: 2 ** 40 })).toMatchObject({ status: 400, body: { error: 'server_port is invalid' } });
    expect((await put('slack', { webhook: `https://93.184.216.34/${'a'.repeat(100_000)}` })).status).toBe(200);
    expect((await put('slack', { webhook: 'http://[::1' })).status).toBe(400);
    expect((await put('slack', { webhook: 'http://%0a127.0.0.1/' })).status).toBe(400);
    expect((await put('slack', { webhook: 'http://-bad-/' })).body).toEqual({ message: { webhook: ['is blocked: Hostname or IP address invalid'] } });
    expect((await put('slack', { webhook: 'http://2130706433/' })).body).toEqual({ message: { webhook: ['is blocked: Requests to localhost are not allowed'] } });
    expect((await api.get(`/projects/${project.id}/services/..%2Fslack`)).status).toBe(400);
    expect((await api.put(`/projects/${project.id}/services/${'x'.repeat(5000)}`, {})).status).toBe(404);
    expect((await api.get(`/projects/not%2Fthere/services/slack`)).status).toBe(404);
  });
});
