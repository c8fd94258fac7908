import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itOnPostgres } from '../support/database.js';
import { startTestServer, type TestServer } from '../support/server.js';

const EMPTY = { emoji: null, message: null, message_html: '' };

let api: TestServer;
let jane: { user: any; token: string };
beforeAll(async () => {
  api = await startTestServer();
  jane = await api.createUser({ username: `Jane_${process.pid}` });
});
afterAll(() => api.close());

const statusEvents = async (id: number) => (await api.events(`user-${id}`)).filter((e) => e.type.startsWith('UserStatus'));

describe('GET /user/status', () => {
  it('is GitLab’s empty status when none is set: null emoji and message, empty message_html', async () => {
    const res = await api.get('/user/status', { token: jane.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.body).toEqual(EMPTY);
  });
  it('is 401 anonymously', async () => {
    expect(await api.get('/user/status', { token: null })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });
});

describe('PUT /user/status', () => {
  it('sets emoji and message, escapes the HTML, and records UserStatusSet', async () => {
    const res = await api.put('/user/status', { emoji: 'coffee', message: 'Out <b>for</b> "lunch" & back' }, { token: jane.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ emoji: 'coffee', message: 'Out <b>for</b> "lunch" & back', message_html: 'Out &lt;b&gt;for&lt;/b&gt; &quot;lunch&quot; &amp; back' });
    expect((await api.get('/user/status', { token: jane.token })).body).toEqual(res.body);
    const last = (await statusEvents(jane.user.id)).at(-1)!;
    expect(last).toMatchObject({ type: 'UserStatusSet', data: { id: jane.user.id, emoji: 'coffee', message: 'Out <b>for</b> "lunch" & back' } });
    expect(last.metadata).toMatchObject({ actor_id: jane.user.id });
  });

  it('defaults the emoji to speech_balloon for a message alone', async () => {
    const res = await api.put('/user/status', { message: 'thinking' }, { token: jane.token });
    expect(res.body).toEqual({ emoji: 'speech_balloon', message: 'thinking', message_html: 'thinking' });
  });

  it('keeps an omitted message as null (declared_params)', async () => {
    const res = await api.put('/user/status', { emoji: 'palm_tree' }, { token: jane.token });
    expect(res.body).toEqual({ emoji: 'palm_tree', message: null, message_html: '' });
  });

  it('appends nothing when the status does not change', async () => {
    await api.put('/user/status', { emoji: 'coffee', message: 'same' }, { token: jane.token });
    const before = (await statusEvents(jane.user.id)).length;
    expect((await api.put('/user/status', { emoji: 'coffee', message: 'same' }, { token: jane.token })).status).toBe(200);
    expect((await statusEvents(jane.user.id)).length).toBe(before);
  });

  it('clears the status when both are blank: 200 with a null body, UserStatusCleared, and the empty status after', async () => {
    await api.put('/user/status', { emoji: 'coffee', message: 'to clear' }, { token: jane.token });
    for (const body of [{}, { emoji: '', message: ' ' }]) {
      const res = await api.put('/user/status', body, { token: jane.token });
      expect(res.status).toBe(200);
      expect(res.text).toBe('null');
      expect((await api.get('/user/status', { token: jane.token })).body).toEqual(EMPTY);
    }
    const types = (await statusEvents(jane.user.id)).map((e) => e.type);
    expect(types.at(-1)).toBe('UserStatusCleared');
    expect(types.filter((t) => t === 'UserStatusCleared')).toHaveLength(1);
  });

  it('accepts form parameters', async () => {
    const res = await api.put('/user/status', undefined, { token: jane.token, form: { emoji: 'house', message: 'home' } });
    expect(res.body).toMatchObject({ emoji: 'house', message: 'home' });
  });

  it('is 400 with GitLab’s validation body for a long message or an unknown emoji', async () => {
    const long = await api.put('/user/status', { message: 'x'.repeat(101) }, { token: jane.token });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ message: { message: ['is too long (maximum is 100 characters)'] } });
    const emoji = await api.put('/user/status', { emoji: 'Not An Emoji' }, { token: jane.token });
    expect(emoji.body).toEqual({ message: { emoji: ['is not included in the list'] } });
    expect((await api.put('/user/status', { message: 'x'.repeat(100) }, { token: jane.token })).status).toBe(200);
  });

  it('is 400 for wrong types', async () => {
    const res = await api.put('/user/status', { emoji: ['coffee'], message: { text: 'x' } }, { token: jane.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'emoji is invalid, message is invalid' });
  });

  it('sets the status of the sudo user', async () => {
    const res = await api.put('/user/status', { message: 'set by sudo' }, { query: { sudo: jane.user.username } });
    expect(res.status).toBe(200);
    expect((await api.get(`/users/${jane.user.id}/status`)).body.message).toBe('set by sudo');
  });
});

// A write authorized on credentials this process read before (CredentialCache) checks them
// again in its own transaction: here another request changes them in between, as another
// process would, and the write must see it.
describe('PUT /user/status from many clients at once', () => {
  // One user's stream written by 48 requests at once: the losers of each race retry behind a
  // lock on the stream (src/commands/kernel/handler.ts) instead of racing again, so none runs
  // out of attempts (409 Resource lock). The embedded database takes one request at a time.
  itOnPostgres('answers every one 200 and records each, in some order', async () => {
    const busy = await api.createUser({ username: `busy_${process.pid}` });
    const messages = Array.from({ length: 48 }, (_, i) => `message ${i}`);
    const answers = await Promise.all(messages.map((message) => api.put('/user/status', { message }, { token: busy.token })));
    expect(answers.map((a) => a.status)).toEqual(messages.map(() => 200));
    const events = await statusEvents(busy.user.id);
    expect(events.map((e) => e.data.message).sort()).toEqual([...messages].sort());
    expect((await api.get('/user/status', { token: busy.token })).body.message).toBe(events.at(-1)!.data.message);
  });
});

describe('PUT /user/status on credentials that changed since they were last read', () => {
  const put = (token: string, message: string) => api.put('/user/status', { message }, { token });

  it('answers 401 for a token revoked in between, and changes nothing', async () => {
    const kim = await api.createUser({ username: `Kim_${process.pid}` });
    const created = await api.post(`/users/${kim.user.id}/impersonation_tokens`, { name: 'for a while', scopes: ['api'] });
    expect((await put(created.body.token, 'first')).status).toBe(200);
    expect((await api.del(`/users/${kim.user.id}/impersonation_tokens/${created.body.id}`)).status).toBe(204);
    const before = await statusEvents(kim.user.id);
    for (let i = 0; i < 2; i++) expect(await put(created.body.token, 'after revocation')).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await statusEvents(kim.user.id)).toEqual(before);
    expect((await api.get(`/users/${kim.user.id}/status`)).body.message).toBe('first');
  });

  it('answers 403 for a user blocked in between, and works again once unblocked', async () => {
    const lee = await api.createUser({ username: `Lee_${process.pid}` });
    expect((await put(lee.token, 'before')).status).toBe(200);
    expect((await api.post(`/users/${lee.user.id}/block`)).status).toBe(201);
    expect(await put(lee.token, 'while blocked')).toMatchObject({ status: 403, body: { message: '403 Forbidden - Your account has been blocked.' } });
    expect((await api.get(`/users/${lee.user.id}/status`)).body.message).toBe('before');
    expect((await api.post(`/users/${lee.user.id}/unblock`)).status).toBe(201);
    expect(await put(lee.token, 'unblocked')).toMatchObject({ status: 200, body: { message: 'unblocked' } });
  });

  it('records the actor as it is now after a rename', async () => {
    const max = await api.createUser({ username: `Max_${process.pid}` });
    expect((await put(max.token, 'as max')).status).toBe(200);
    const renamed = `Maxine_${process.pid}`;
    expect((await api.put(`/users/${max.user.id}`, { username: renamed })).status).toBe(200);
    expect((await put(max.token, 'as maxine')).status).toBe(200);
    expect((await statusEvents(max.user.id)).at(-1)!.metadata).toMatchObject({ actor_id: max.user.id, actor_username: renamed });
  });

  it('still checks the credentials before the parameters', async () => {
    const ann = await api.createUser({ username: `Ann_${process.pid}` });
    expect((await put(ann.token, 'ok')).status).toBe(200);
    expect((await api.post(`/users/${ann.user.id}/block`)).status).toBe(201);
    expect(await api.put('/user/status', { message: ['not', 'a', 'string'] }, { token: ann.token })).toMatchObject({ status: 403 });
  });
});

describe('GET /users/:id_or_username/status', () => {
  it('shows a user’s status by id or case-insensitive username, also anonymously', async () => {
    await api.put('/user/status', { emoji: 'rocket', message: 'shipping' }, { token: jane.token });
    const expected = { emoji: 'rocket', message: 'shipping', message_html: 'shipping' };
    for (const path of [`/users/${jane.user.id}/status`, `/users/${jane.user.username.toLowerCase()}/status`, `/users/${jane.user.username}/status.json`]) {
      for (const token of [api.rootToken, null]) {
        const res = await api.get(path, { token });
        expect(res.status, path).toBe(200);
        expect(res.body).toEqual(expected);
      }
    }
  });
  it('is GitLab’s empty status for a user without one', async () => {
    expect((await api.get('/users/1/status')).body).toEqual(EMPTY);
  });
  it('is 404 for an unknown user, id or username', async () => {
    for (const who of ['999999', '99999999999999999999', 'nobody-here']) {
      const res = await api.get(`/users/${who}/status`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
    }
  });
});
