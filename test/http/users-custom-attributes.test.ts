import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let regular: { user: any; token: string };
let n = 0;
async function newUser() {
  const username = `ca${++n}_${process.pid}`;
  const res = await api.post('/users', { email: `${username}@example.com`, username, name: username, password: 'password123' });
  return res.body;
}
const path = (id: number, key?: string) => `/users/${id}/custom_attributes${key === undefined ? '' : `/${encodeURIComponent(key)}`}`;

beforeAll(async () => {
  api = await startTestServer();
  regular = await api.createUser({ username: `regular_${process.pid}` });
});
afterAll(() => api.close());

describe('PUT /users/:id/custom_attributes/:key', () => {
  it('sets a value: 200 {key, value}, UserCustomAttributeSet on the user stream, readable afterwards', async () => {
    const user = await newUser();
    const res = await api.put(path(user.id, 'team'), { value: 'blue' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ key: 'team', value: 'blue' });
    expect((await api.get(path(user.id, 'team'))).body).toEqual({ key: 'team', value: 'blue' });
    const event = (await api.events(`user-${user.id}`)).at(-1)!;
    expect(event).toMatchObject({ type: 'UserCustomAttributeSet', data: { id: user.id, key: 'team', value: 'blue' }, metadata: { actor_id: 1 } });
  });

  it('replaces a value, and appends nothing when it is the same', async () => {
    const user = await newUser();
    await api.put(path(user.id, 'team'), { value: 'blue' });
    expect((await api.put(path(user.id, 'team'), { value: 'red' })).body).toEqual({ key: 'team', value: 'red' });
    expect((await api.put(path(user.id, 'team'), { value: 'red' })).status).toBe(200);
    const sets = (await api.events(`user-${user.id}`)).filter((e) => e.type === 'UserCustomAttributeSet');
    expect(sets.map((e) => e.data.value)).toEqual(['blue', 'red']);
  });

  it('takes keys with dots, spaces and unicode, and form or query values', async () => {
    const user = await newUser();
    expect((await api.put(path(user.id, 'a.b c/ü'), undefined, { form: { value: 'x' } })).body).toEqual({ key: 'a.b c/ü', value: 'x' });
    expect((await api.put(path(user.id, 'q'), undefined, { query: { value: 'from-query' } })).body).toEqual({ key: 'q', value: 'from-query' });
  });

  it('is 400 without a value or with a blank one', async () => {
    const user = await newUser();
    expect(await api.put(path(user.id, 'team'), {})).toMatchObject({ status: 400, body: { error: 'value is missing' } });
    expect(await api.put(path(user.id, 'team'), { value: ' ' })).toMatchObject({ status: 400, body: { message: { value: ["can't be blank"] } } });
    expect(await api.put(path(user.id, 'team'), { value: ['a'] })).toMatchObject({ status: 400, body: { error: 'value is invalid' } });
  });

  it('is 404 for an unknown user, with no route for a non-numeric id', async () => {
    expect(await api.put(path(999999, 'team'), { value: 'x' })).toMatchObject({ status: 404, body: { message: '404 Not Found' } });
    expect(await api.put('/users/root/custom_attributes/team', { value: 'x' })).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
  });
});

describe('GET /users/:id/custom_attributes', () => {
  it('lists them in creation order, without pagination', async () => {
    const user = await newUser();
    for (const [key, value] of [['zeta', '1'], ['alpha', '2'], ['mid', '3']]) await api.put(path(user.id, key), { value });
    await api.put(path(user.id, 'zeta'), { value: 'changed' });
    const res = await api.get(path(user.id));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { key: 'zeta', value: 'changed' },
      { key: 'alpha', value: '2' },
      { key: 'mid', value: '3' },
    ]);
    expect(res.headers.get('x-total')).toBeNull();
  });
  it('is an empty list for a user without attributes', async () => {
    expect((await api.get(path((await newUser()).id))).body).toEqual([]);
  });
  it('finds the user before it authorizes: 404, then 403 for non-administrators (anonymous included)', async () => {
    expect((await api.get(path(999999), { token: regular.token })).body).toEqual({ message: '404 Not Found' });
    expect((await api.get(path(regular.user.id), { token: regular.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await api.get(path(regular.user.id), { token: null })).body).toEqual({ message: '403 Forbidden' });
  });
});

describe('GET /users/:id/custom_attributes/:key', () => {
  it('is "404 Not found" for an unknown key', async () => {
    const user = await newUser();
    const res = await api.get(path(user.id, 'nope'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: '404 Not found' });
  });
});

describe('DELETE /users/:id/custom_attributes/:key', () => {
  it('deletes: 204, gone afterwards, UserCustomAttributeDeleted; a second delete is 404', async () => {
    const user = await newUser();
    await api.put(path(user.id, 'team'), { value: 'blue' });
    const res = await api.del(path(user.id, 'team'));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(path(user.id))).body).toEqual([]);
    expect((await api.events(`user-${user.id}`)).at(-1)).toMatchObject({ type: 'UserCustomAttributeDeleted', data: { id: user.id, key: 'team' } });
    expect(await api.del(path(user.id, 'team'))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
  it('is 401 anonymously and 403 for a regular user', async () => {
    const user = await newUser();
    await api.put(path(user.id, 'team'), { value: 'blue' });
    expect((await api.del(path(user.id, 'team'), { token: null })).status).toBe(401);
    expect((await api.del(path(user.id, 'team'), { token: regular.token })).status).toBe(403);
    expect((await api.get(path(user.id, 'team'))).body).toEqual({ key: 'team', value: 'blue' });
  });
});

describe('GET /users?custom_attributes[key]=value', () => {
  it('filters administrators’ lists by every given pair (exact key and value)', async () => {
    const [a, b] = [await newUser(), await newUser()];
    const tag = `dept_${process.pid}`;
    await api.put(path(a.id, tag), { value: 'eng' });
    await api.put(path(a.id, 'site'), { value: 'lis' });
    await api.put(path(b.id, tag), { value: 'eng' });
    const ids = async (query: Record<string, string>) => (await api.get('/users', { query })).body.map((u: any) => u.id);
    expect(await ids({ [`custom_attributes[${tag}]`]: 'eng' })).toEqual([b.id, a.id]);
    expect(await ids({ [`custom_attributes[${tag}]`]: 'eng', 'custom_attributes[site]': 'lis' })).toEqual([a.id]);
    expect(await ids({ [`custom_attributes[${tag}]`]: 'ENG' })).toEqual([]);
    const withAttributes = await api.get('/users', { query: { [`custom_attributes[${tag}]`]: 'eng', with_custom_attributes: 'true' } });
    expect(withAttributes.body.find((u: any) => u.id === a.id).custom_attributes).toEqual([
      { key: tag, value: 'eng' },
      { key: 'site', value: 'lis' },
    ]);
  });
});

describe('deleting the user', () => {
  it('removes its custom attributes from the read table', async () => {
    const user = await newUser();
    await api.put(path(user.id, 'team'), { value: 'blue' });
    await api.del(`/users/${user.id}`);
    const { rows } = await sql<{ count: string }>`select count(*) as count from user_custom_attributes where user_id = ${user.id}`.execute(api.handle.db);
    expect(Number(rows[0]!.count)).toBe(0);
    expect((await api.get(path(user.id))).body).toEqual({ message: '404 Not Found' });
  });
});
