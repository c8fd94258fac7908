import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueDeliveries } from '../../src/commands/integration-delivery-sender.js';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';
import { orderedSender, WebhookReceiver } from '../support/webhook-receiver.js';

// The system hooks of users' SSH keys (GitLab 12.10's SystemHooksService for a Key:
// `key_create`, `key_destroy`), through the production `hook-deliveries` reactor and the
// sender, to a local receiver.

let counter = 0;
let api: TestServer;
const receiver = new WebhookReceiver();
const clock = new Date(Date.now() + 3_600_000);
const SENDER = orderedSender(clock);

beforeAll(async () => {
  api = await startTestServer({}, { deliveries: false });
  await settled(api);
  await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});

/** A new system hook, once the reactor has told of everything before it. */
async function systemHook() {
  await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
  const path = `/system/k${++counter}x${process.pid}`;
  const res = await api.post('/hooks', { url: `${receiver.url}${path}` });
  expect(res.status, res.text).toBe(201);
  return path;
}

/** Sends what is due until `path` has received `count` requests. */
async function received(path: string, count: number) {
  const got = await receiver.awaitRequests(path, count, () => sendDueDeliveries(api.handle.db, SENDER));
  expect(got.length, `requests to ${path}`).toBe(count);
  return got.map((r) => ({ headers: r.headers, body: JSON.parse(r.body) }));
}

const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

describe('key_create and key_destroy', () => {
  it("tell of a user's key added and removed, with the owner's username, in GitLab's key order", async () => {
    const user = await api.createUser();
    const path = await systemHook();
    const created = await api.post('/user/keys', { title: 'laptop', key: sshPublicKey() }, { token: user.token });
    expect(created.status, created.text).toBe(201);
    expect((await api.del(`/user/keys/${created.body.id}`, { token: user.token })).status).toBe(204);
    const got = await received(path, 2);
    const data = { created_at: time, updated_at: time, key: created.body.key, id: created.body.id, username: user.user.username };
    expect(got.map(({ body }) => body)).toEqual([
      { event_name: 'key_create', ...data },
      { event_name: 'key_destroy', ...data },
    ]);
    expect(Object.keys(got[0]!.body)).toEqual(['event_name', 'created_at', 'updated_at', 'key', 'id', 'username']);
    expect(got[0]!.headers['x-gitlab-event']).toBe('System Hook');
    expect(got[1]!.body.created_at).toBe(got[0]!.body.created_at);
  });

  it('tell of a key an administrator adds and removes for a user', async () => {
    const user = await api.createUser();
    const path = await systemHook();
    const created = await api.post(`/users/${user.user.id}/keys`, { title: 'by admin', key: sshPublicKey() });
    expect(created.status, created.text).toBe(201);
    expect((await api.del(`/users/${user.user.id}/keys/${created.body.id}`)).status).toBe(204);
    const got = await received(path, 2);
    expect(got.map(({ body }) => [body.event_name, body.id, body.username])).toEqual([
      ['key_create', created.body.id, user.user.username],
      ['key_destroy', created.body.id, user.user.username],
    ]);
  });

  it("tell of a deleted user's keys destroyed with the user (Key#post_destroy_hook), after user_destroy", async () => {
    const user = await api.createUser();
    const key = await api.post('/user/keys', { title: 'gone with the user', key: sshPublicKey() }, { token: user.token });
    expect(key.status, key.text).toBe(201);
    const path = await systemHook();
    expect((await api.del(`/users/${user.user.id}`)).status).toBe(204);
    const got = await received(path, 2);
    expect(got.map(({ body }) => body.event_name)).toEqual(['user_destroy', 'key_destroy']);
    expect(got[1]!.body).toEqual({ event_name: 'key_destroy', created_at: time, updated_at: time, key: key.body.key, id: key.body.id, username: user.user.username });
  });

  it('a refused key tells nothing', async () => {
    const user = await api.createUser();
    const path = await systemHook();
    expect((await api.post('/user/keys', { title: 'bad', key: 'ssh-rsa nonsense' }, { token: user.token })).status).toBe(400);
    const good = await api.post('/user/keys', { title: 'good', key: sshPublicKey() }, { token: user.token });
    const got = await received(path, 1);
    expect(got.map(({ body }) => [body.event_name, body.id])).toEqual([['key_create', good.body.id]]);
  });
});
