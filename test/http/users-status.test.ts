import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
