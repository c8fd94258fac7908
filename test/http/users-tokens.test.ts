import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

// GitLab 12: Entities::ImpersonationToken(WithToken) — token comes before impersonation.
const IMPERSONATION = ['id', 'name', 'revoked', 'created_at', 'scopes', 'active', 'expires_at', 'impersonation'];
const IMPERSONATION_WITH_TOKEN = ['id', 'name', 'revoked', 'created_at', 'scopes', 'active', 'expires_at', 'token', 'impersonation'];
// GitLab 13.6: Entities::PersonalAccessTokenWithToken.
const PERSONAL_WITH_TOKEN = ['id', 'name', 'revoked', 'created_at', 'scopes', 'user_id', 'active', 'expires_at', 'token'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let api: TestServer;
let target: { user: any; token: string };
let regular: { user: any; token: string };
beforeAll(async () => {
  api = await startTestServer();
  target = await api.createUser({ username: `target_${process.pid}` });
  regular = await api.createUser({ username: `regular_${process.pid}` });
});
afterAll(() => api.close());

const base = () => `/users/${target.user.id}/impersonation_tokens`;

describe('POST /users/:user_id/impersonation_tokens', () => {
  it('creates a token shown once: 201, GitLab’s fields, the event with a digest only', async () => {
    const res = await api.post(base(), { name: 'impersonate', scopes: ['api', 'read_user'], expires_at: '2999-12-31' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(IMPERSONATION_WITH_TOKEN);
    expect(res.body).toMatchObject({ name: 'impersonate', revoked: false, scopes: ['api', 'read_user'], active: true, expires_at: '2999-12-31', impersonation: true });
    expect(res.body.id).toEqual(expect.any(Number));
    expect(res.body.created_at).toMatch(ISO);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const event = (await api.events(`user-${target.user.id}`)).at(-1)!;
    expect(event).toMatchObject({
      type: 'PersonalAccessTokenCreated',
      data: { id: res.body.id, user_id: target.user.id, name: 'impersonate', scopes: ['api', 'read_user'], expires_at: '2999-12-31', impersonation: true },
    });
    expect(event.data.token_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(event)).not.toContain(res.body.token);
    // The token acts as the user, and says so in the events it causes.
    const me = await api.get('/user', { token: res.body.token });
    expect(me.body.username).toBe(target.user.username);
    await api.put('/user/status', { message: 'impersonated' }, { token: res.body.token });
    expect((await api.events(`user-${target.user.id}`)).at(-1)!.metadata).toMatchObject({ actor_id: target.user.id, impersonation: true, token_id: res.body.id });
  });

  it('takes a form-encoded scopes[] array and no expiry', async () => {
    const res = await api.post(base(), undefined, { form: { name: 'form', 'scopes[]': 'read_user' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ scopes: ['read_user'], expires_at: null, active: true });
  });

  const invalid: [string, Record<string, unknown>, unknown][] = [
    ['no name', { scopes: ['api'] }, { error: 'name is missing' }],
    ['no scopes', { name: 'x' }, { message: { scopes: ["can't be blank"] } }],
    ['an unknown scope', { name: 'x', scopes: ['api', 'admin_mode'] }, { message: { scopes: ['can only contain available scopes'] } }],
    ['a blank name', { name: ' ', scopes: ['api'] }, { message: { name: ["can't be blank"] } }],
    ['a bad date', { name: 'x', scopes: ['api'], expires_at: '31/12/2999' }, { error: 'expires_at is invalid' }],
    ['a name of the wrong type', { name: ['x'], scopes: ['api'] }, { error: 'name is invalid' }],
  ];
  it.each(invalid)('is 400 for %s', async (_, body, expected) => {
    const res = await api.post(base(), body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(expected);
  });

  it('checks the administrator before the parameters, then the user', async () => {
    expect((await api.post('/users/abc/impersonation_tokens', {}, { token: regular.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await api.post('/users/abc/impersonation_tokens', {})).body).toEqual({ error: 'user_id is invalid, name is missing' });
    expect((await api.post('/users/999999/impersonation_tokens', { name: 'x', scopes: ['api'] })).body).toEqual({ message: '404 User Not Found' });
    expect((await api.post('/users/99999999999999999999/impersonation_tokens', { name: 'x', scopes: ['api'] })).body).toEqual({ message: '404 User Not Found' });
  });
});

describe('GET /users/:user_id/impersonation_tokens', () => {
  it('lists the user’s impersonation tokens (not its personal ones) without the token, paginated', async () => {
    const res = await api.get(base(), { query: { per_page: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    expect(Object.keys(res.body[0])).toEqual(IMPERSONATION);
    expect(res.headers.get('x-per-page')).toBe('1');
    expect(Number(res.headers.get('x-total'))).toBeGreaterThanOrEqual(2);
    expect(res.headers.get('link')).toContain('rel="next"');
    const all = await api.get(base(), { query: { per_page: 100 } });
    expect(all.body.every((t: any) => t.impersonation === true)).toBe(true);
    expect(all.body.map((t: any) => t.id)).toEqual([...all.body.map((t: any) => t.id)].sort((a: number, b: number) => a - b));
  });

  it('filters by state: active, inactive (revoked or expired), all', async () => {
    const expired = await api.post(base(), { name: 'expired', scopes: ['api'], expires_at: '2000-01-01' });
    expect(expired.body.active).toBe(false);
    const revoked = await api.post(base(), { name: 'revoked', scopes: ['api'] });
    await api.del(`${base()}/${revoked.body.id}`);
    const ids = async (state: string) => (await api.get(base(), { query: { state, per_page: 100 } })).body.map((t: any) => t.id);
    const inactive = await ids('inactive');
    expect(inactive).toEqual(expect.arrayContaining([expired.body.id, revoked.body.id]));
    const active = await ids('active');
    expect(active).not.toContain(expired.body.id);
    expect(active).not.toContain(revoked.body.id);
    expect((await ids('all')).length).toBe(active.length + inactive.length);
    expect((await api.get(base(), { query: { state: 'some' } })).body).toEqual({ error: 'state does not have a valid value' });
  });

  it('is 404 for an unknown user', async () => {
    expect((await api.get('/users/999999/impersonation_tokens')).body).toEqual({ message: '404 User Not Found' });
  });
});

describe('GET /users/:user_id/impersonation_tokens/:impersonation_token_id', () => {
  it('shows one token without its secret', async () => {
    const created = await api.post(base(), { name: 'one', scopes: ['read_user'] });
    const res = await api.get(`${base()}/${created.body.id}`);
    expect(res.status).toBe(200);
    const { token: _, ...withoutToken } = created.body;
    expect(res.body).toEqual(withoutToken);
    expect(Object.keys(res.body)).toEqual(IMPERSONATION);
  });
  it('is 404 for a token of another user, a personal token, or none; 400 for a non-numeric id', async () => {
    const created = await api.post(base(), { name: 'mine', scopes: ['api'] });
    const personal = await api.post(`/users/${target.user.id}/personal_access_tokens`, { name: 'personal', scopes: ['api'] });
    for (const path of [`/users/${regular.user.id}/impersonation_tokens/${created.body.id}`, `${base()}/${personal.body.id}`, `${base()}/999999`, `${base()}/99999999999999999999`]) {
      const res = await api.get(path);
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ message: '404 Impersonation Token Not Found' });
    }
    expect((await api.get(`${base()}/first`)).body).toEqual({ error: 'impersonation_token_id is invalid' });
  });
});

describe('DELETE /users/:user_id/impersonation_tokens/:impersonation_token_id', () => {
  it('revokes: 204, revoked and inactive afterwards, the token no longer authenticates, once in the log', async () => {
    const created = await api.post(base(), { name: 'to-revoke', scopes: ['api'] });
    expect((await api.get('/user', { token: created.body.token })).status).toBe(200);
    const res = await api.del(`${base()}/${created.body.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(`${base()}/${created.body.id}`)).body).toMatchObject({ revoked: true, active: false });
    expect((await api.get('/user', { token: created.body.token })).status).toBe(401);
    // GitLab 12: revoking again is still 204 (token.revoke! on a revoked token).
    expect((await api.del(`${base()}/${created.body.id}`)).status).toBe(204);
    const revocations = (await api.events(`user-${target.user.id}`)).filter((e) => e.type === 'PersonalAccessTokenRevoked' && e.data.id === created.body.id);
    expect(revocations).toHaveLength(1);
    expect(revocations[0]!.data).toEqual({ id: created.body.id, user_id: target.user.id });
  });
  it('is 404 for an unknown token', async () => {
    expect((await api.del(`${base()}/999999`)).body).toEqual({ message: '404 Impersonation Token Not Found' });
  });
});

describe('POST /users/:user_id/personal_access_tokens', () => {
  it('creates a personal access token for the user: 201 with user_id and the token', async () => {
    const res = await api.post(`/users/${target.user.id}/personal_access_tokens`, { name: 'pat', scopes: ['read_user'], expires_at: '2999-01-01' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(PERSONAL_WITH_TOKEN);
    expect(res.body).toMatchObject({ name: 'pat', revoked: false, scopes: ['read_user'], user_id: target.user.id, active: true, expires_at: '2999-01-01' });
    expect((await api.get('/user', { token: res.body.token })).body.id).toBe(target.user.id);
    expect((await api.events(`user-${target.user.id}`)).at(-1)).toMatchObject({ type: 'PersonalAccessTokenCreated', data: { impersonation: false } });
  });
  it('validates its parameters (before the administrator check)', async () => {
    const path = `/users/${target.user.id}/personal_access_tokens`;
    expect((await api.post(path, { name: 'x' })).body).toEqual({ error: 'scopes is missing' });
    expect((await api.post(path, { name: 'x', scopes: ['root'] })).body).toEqual({ error: 'scopes does not have a valid value' });
    expect((await api.post(path, { name: 'x' }, { token: regular.token })).body).toEqual({ error: 'scopes is missing' });
    expect((await api.post(path, { name: 'x', scopes: ['api'] }, { token: regular.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await api.post('/users/999999/personal_access_tokens', { name: 'x', scopes: ['api'] })).body).toEqual({ message: '404 User Not Found' });
  });
});
