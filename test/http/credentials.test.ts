import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireUserForCommands } from '../../src/http/kernel/auth.js';
import { sendError } from '../../src/http/kernel/errors.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

/**
 * A route on the kernel's cached credentials that answers without running a command: it
 * shows what it was authorized as, so a test sees whether that was checked.
 */
function probe() {
  const app = new Hono();
  app.use('*', async (c, next) => {
    c.set('app' as never, api.runtime.app as never);
    await next();
  });
  app.put('/probe', (c) => requireUserForCommands(c, async (auth) => c.json({ username: auth.user.username, is_admin: auth.user.is_admin })));
  app.onError((error, c) => sendError(c, error) ?? c.json({ message: '500' }, 500));
  return (token: string) => app.request('/probe', { method: 'PUT', headers: { 'PRIVATE-TOKEN': token } });
}

describe('requireUserForCommands', () => {
  it('answers a route that ran no command on the credentials as they are now, not as cached', async () => {
    const call = probe();
    const pat = await api.createUser({ username: `Pat_${process.pid}` });
    expect((await api.get('/user', { token: pat.token })).status).toBe(200); // the process reads (and keeps) the token
    expect(await (await call(pat.token)).json()).toEqual({ username: pat.user.username, is_admin: false });

    expect((await api.put(`/users/${pat.user.id}`, { admin: true })).status).toBe(200);
    expect(await (await call(pat.token)).json()).toEqual({ username: pat.user.username, is_admin: true });

    expect((await api.post(`/users/${pat.user.id}/block`)).status).toBe(201);
    const blocked = await call(pat.token);
    expect(blocked.status).toBe(403);
    expect(await blocked.json()).toEqual({ message: '403 Forbidden - Your account has been blocked.' });
  });
});
