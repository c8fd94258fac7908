import { Hono, type Context } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withWriter, writerFor, type RequestWriter } from '../../src/http/kernel/auth.js';
import { sendError } from '../../src/http/kernel/errors.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { describeOnPostgres } from '../support/database.js';
import { openDatabase } from '../../src/database/database.js';
import { listen, openRuntime } from '../../src/runtime.js';
import { pino } from 'pino';
import type { Writer } from '../../src/commands/kernel/context.js';
import { run } from '../../src/commands/kernel/run.js';
import { users } from '../../src/domain/users/aggregate.js';

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
  app.put('/probe', (c) => withWriter(c, async ({ auth }) => c.json({ username: auth.user.username, is_admin: auth.user.is_admin })));
  app.onError((error, c) => sendError(c, error) ?? c.json({ message: '500' }, 500));
  return (token: string) => app.request('/probe', { method: 'PUT', headers: { 'PRIVATE-TOKEN': token } });
}

describe('withWriter', () => {
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

/**
 * A route on the kernel's cached credentials whose command takes the writer `writerOf` gives:
 * the one the route is handed, or one it builds itself. `meanwhile` runs after the
 * authorization and before the command: what another process could do in between.
 */
function statusRoute(meanwhile: () => Promise<void> = async () => {}, writerOf: (c: Context, w: RequestWriter) => Writer = (_c, w) => w) {
  const app = new Hono();
  app.use('*', async (c, next) => {
    c.set('app' as never, api.runtime.app as never);
    await next();
  });
  app.put('/status/:message', (c) =>
    withWriter(c, async (w) => {
      await meanwhile();
      const message = c.req.param('message');
      await run(writerOf(c, w), users, w.auth.user.id, { type: 'SetUserStatus', emoji: null, message, messageHtml: message });
      return c.json({ message });
    }),
  );
  app.onError((error, c) => sendError(c, error) ?? c.json({ message: '500' }, 500));
  return (token: string, message: string) => app.request(`/status/${message}`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': token } });
}

const statusMessages = async (id: number) => (await api.events(`user-${id}`)).filter((e) => e.type === 'UserStatusSet').map((e) => e.data.message);

describe('a command of a route authorized on cached credentials', () => {
  it('is refused when the user was blocked since the credentials were cached, through a writer the route builds too', async () => {
    const put = statusRoute(undefined, (c, w) => writerFor(c, w.auth));
    const kai = await api.createUser({ username: `Kai_${process.pid}` });
    expect((await api.get('/user', { token: kai.token })).status).toBe(200); // the process reads (and keeps) the token
    expect(await (await put(kai.token, 'cached')).json()).toEqual({ message: 'cached' });

    expect((await api.post(`/users/${kai.user.id}/block`)).status).toBe(201);
    const refused = await put(kai.token, 'blocked');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ message: '403 Forbidden - Your account has been blocked.' });
    expect(await statusMessages(kai.user.id)).toEqual(['cached']);
  });

  it('is refused when the token is revoked between the authorization and the commit', async () => {
    let revoke = async () => {};
    const put = statusRoute(() => revoke());
    const lou = await api.createUser({ username: `Lou_${process.pid}` });
    const created = await api.post(`/users/${lou.user.id}/impersonation_tokens`, { name: 'short', scopes: ['api'] });
    expect(await (await put(created.body.token, 'first')).json()).toEqual({ message: 'first' }); // authorized by a query, then cached

    revoke = async () => {
      revoke = async () => {};
      expect((await api.del(`/users/${lou.user.id}/impersonation_tokens/${created.body.id}`)).status).toBe(204);
    };
    const refused = await put(created.body.token, 'revoked');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ message: '401 Unauthorized' });
    expect(await statusMessages(lou.user.id)).toEqual(['first']);
  });
});

describeOnPostgres('a read authenticated on cached credentials', () => {
  it('is refused once another process revokes the token: its NOTIFY empties the cache', async () => {
    // A second forgelog on the same database, with its own pool, notifier and cache.
    const handle = await openDatabase({ databaseUrl: api.handle.pool!.options.connectionString! });
    const other = await openRuntime({ ...api.runtime.config, port: 0 }, { handle, logger: pino({ level: 'silent' }), migrate: false, bootstrap: false });
    const { server } = await listen(other, 0, '127.0.0.1');
    try {
      const port = (server.address() as { port: number }).port;
      const ray = await api.createUser({ username: `Ray_${process.pid}` });
      const created = await api.post(`/users/${ray.user.id}/impersonation_tokens`, { name: 'elsewhere', scopes: ['api'] });
      const get = () => fetch(`http://127.0.0.1:${port}/api/v4/users/${ray.user.id}`, { headers: { 'PRIVATE-TOKEN': created.body.token } });
      expect((await get()).status).toBe(200); // read by a query, then cached
      expect((await get()).status).toBe(200);
      expect(other.app.credentials.size).toBe(1);

      expect((await api.del(`/users/${ray.user.id}/impersonation_tokens/${created.body.id}`)).status).toBe(204);
      // The notification takes a few milliseconds to arrive; never more than a few seconds here.
      const deadline = Date.now() + 10_000;
      let status = (await get()).status;
      while (status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        status = (await get()).status;
      }
      expect(status).toBe(401);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await other.close();
    }
  });
});
