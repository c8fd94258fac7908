import { request as httpRequest } from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { expectAuthenticationIntact as expectIntact } from '../support/auth-intact.js';

// Issue 8, section 1: what the kernel does with hostile input, before any route sees it.

const MAX_BODY_BYTES = 1024 * 1024;

let api: TestServer;
let user: { user: any; token: string };
beforeAll(async () => {
  api = await startTestServer({ maxBodyBytes: MAX_BODY_BYTES });
  user = await api.createUser();
});
afterAll(() => api.close());

interface Raw {
  status: number;
  text: string;
  body: any;
  headers: Headers;
}

/** A request exactly as written: raw path and query, raw body, any content type. */
async function raw(method: string, path: string, options: { token?: string | null; type?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Raw> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers['private-token'] = options.token;
  if (options.type) headers['content-type'] = options.type;
  const response = await fetch(`${api.url}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: options.body }) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, text, body, headers: response.headers };
}

const eventCount = async () => Number((await sql<{ n: string }>`select count(*) as n from events`.execute(api.handle.db)).rows[0]!.n);

/** Authentication means what it meant, and root can still create with a body. */
async function expectAuthenticationIntact() {
  await expectIntact(api, user);
  const group = await api.post('/groups', { name: `after-${Date.now()}`, path: `after-${Date.now()}` });
  expect(group.status).toBe(201);
}

describe('prototype keys from the wire (item 1)', () => {
  it.each([
    ['query hash', () => raw('GET', '/api/v4/version?__proto__[sudo]=alice')],
    ['query hash, anonymous write', () => raw('POST', '/api/v4/groups?__proto__[x]=1', { type: 'application/json', body: '{}' })],
    ['query constructor', () => raw('GET', '/api/v4/version?constructor[prototype]=alice&prototype[sudo]=alice', { token: api.rootToken })],
    ['query entry', () => raw('GET', '/api/v4/version?sudo[__proto__]=alice', { token: api.rootToken })],
    ['form', () => raw('POST', '/api/v4/groups', { type: 'application/x-www-form-urlencoded', body: '__proto__%5Bsudo%5D=alice&__proto__[x]=1' })],
    [
      'multipart',
      () => {
        const form = new FormData();
        form.append('__proto__[sudo]', 'alice');
        form.append('constructor[prototype]', 'x');
        return fetch(`${api.apiUrl}/version`, { method: 'PUT', body: form }).then((r) => r.text());
      },
    ],
    ['JSON', () => raw('PUT', '/api/v4/user/status', { token: user.token, type: 'application/json', body: '{"__proto__":{"sudo":"root"},"constructor":{"prototype":{"sudo":"root"}},"message":"hi"}' })],
  ])('%s: nothing reaches a prototype, and authentication is unchanged', async (_, send) => {
    await send();
    await expectAuthenticationIntact();
  });

  it('a JSON __proto__ key is not a parameter (no sudo through the body)', async () => {
    const res = await raw('PUT', '/api/v4/user/status', { token: user.token, type: 'application/json', body: '{"__proto__":{"sudo":"root"},"message":"mine"}' });
    expect(res.status).toBe(200);
    expect((await api.get(`/users/${user.user.id}/status`)).body.message).toBe('mine');
    expect((await api.get('/users/1/status')).body.message).not.toBe('mine');
  });
});

describe('values PostgreSQL cannot store (item 2)', () => {
  it.each([
    ['NUL in the path', 'GET', '/api/v4/groups/%00', undefined, undefined],
    ['NUL in the query', 'GET', '/api/v4/users?search=a%00b', undefined, undefined],
    ['NUL in a JSON string', 'PUT', '/api/v4/user/status', 'application/json', '{"message":"a\\u0000b"}'],
    ['NUL in a JSON key', 'PUT', '/api/v4/user/status', 'application/json', '{"a\\u0000b":"x"}'],
    ['NUL in a form value', 'PUT', '/api/v4/user/status', 'application/x-www-form-urlencoded', 'message=a%00b'],
    ['a lone high surrogate', 'PUT', '/api/v4/user/status', 'application/json', '{"message":"\\ud800"}'],
    ['a lone low surrogate', 'PUT', '/api/v4/user/status', 'application/json', '{"message":["x\\udc00y"]}'],
  ])("%s is 400 'Bad Request' (GitLab's HandleNullBytes), for anonymous and signed-in callers alike", async (_, method, path, type, body) => {
    const before = await eventCount();
    for (const token of [null, user.token]) {
      const res = await raw(method, path, { token, ...(type ? { type } : {}), ...(body ? { body } : {}) });
      expect(res.status).toBe(400);
      expect(res.text).toBe('Bad Request');
    }
    expect(await eventCount()).toBe(before);
  });

  it('a well-formed surrogate pair is kept', async () => {
    const res = await raw('PUT', '/api/v4/user/status', { token: user.token, type: 'application/json', body: '{"message":"\\ud83d\\ude00"}' });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('😀');
  });

  describe('impossible or out-of-range dates are "<param> is invalid"', () => {
    const dates = ['0000-01-01', '+275760-09-13', '2024-02-30', '2023-13-01', '10000-01-01'];
    it.each(dates)('personal access token expires_at %s', async (date) => {
      const res = await api.post(`/users/${user.user.id}/personal_access_tokens`, { name: 't', scopes: ['api'], expires_at: date });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'expires_at is invalid' });
    });
    it.each(dates)('member expires_at %s, on add and on update', async (date) => {
      const group = await createGroup(api);
      const added = await api.post(`/groups/${group.id}/members`, { user_id: user.user.id, access_level: 30, expires_at: date });
      expect(added.status).toBe(400);
      expect(added.body).toEqual({ error: 'expires_at is invalid' });
      expect((await api.post(`/groups/${group.id}/members`, { user_id: user.user.id, access_level: 30 })).status).toBe(201);
      const updated = await api.put(`/groups/${group.id}/members/${user.user.id}`, { access_level: 30, expires_at: date });
      expect(updated.status).toBe(400);
      expect(updated.body).toEqual({ error: 'expires_at is invalid' });
    });
    it.each(dates)('users created_after %s', async (date) => {
      const res = await api.get('/users', { query: { created_after: date } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'created_after is invalid' });
    });
    it('real dates still pass, 29 February of a leap year included', async () => {
      const res = await api.post(`/users/${user.user.id}/personal_access_tokens`, { name: 't', scopes: ['api'], expires_at: '2096-02-29' });
      expect(res.status).toBe(201);
      expect(res.body.expires_at).toBe('2096-02-29');
    });
  });

  describe('values longer than an index entry are validation errors', () => {
    // Random text: PostgreSQL compresses a repeated character below the btree limit.
    const random = (n: number) => Array.from({ length: n }, () => Math.random().toString(36).charAt(2)).join('');
    it('an 8 KB user custom attribute value or key', async () => {
      const value = await api.put(`/users/${user.user.id}/custom_attributes/team`, { value: random(8192) });
      expect(value.status).toBe(400);
      expect(value.body).toEqual({ message: { value: ['is too long (maximum is 255 characters)'] } });
      const key = await api.put(`/users/${user.user.id}/custom_attributes/${random(8192)}`, { value: 'x' });
      expect(key.status).toBe(400);
      expect(key.body).toEqual({ message: { key: ['is too long (maximum is 255 characters)'] } });
      expect((await api.put(`/users/${user.user.id}/custom_attributes/team`, { value: random(255) })).status).toBe(200);
    });
    it('an 8 KB group custom attribute value', async () => {
      const group = await createGroup(api);
      const res = await api.put(`/groups/${group.id}/custom_attributes/team`, { value: random(8192) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { value: ['is too long (maximum is 255 characters)'] } });
    });
    it('a 5,000-character group name', async () => {
      const group = await createGroup(api);
      const res = await api.put(`/groups/${group.id}`, { name: random(5000) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { name: ['is too long (maximum is 255 characters)'] } });
    });
    it('an 8 KB email', async () => {
      const res = await api.post('/users', { name: 'Long', username: `long${Date.now()}`, email: `${random(8192)}@example.com`, password: 'password123' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { email: ['is too long (maximum is 255 characters)'] } });
    });
  });

  describe('malformed bodies are 400 before authentication', () => {
    const invalidBody = (type: string) => ({
      error: `\nProblem:\n  message body does not match declared format\nResolution:\n  when specifying ${type} as content-type, you must pass valid ${type} in the request's 'body' `,
    });
    it.each([
      ['multipart/form-data', 'x'],
      ['multipart/form-data; boundary=abc', 'x'],
      ['multipart/form-data; boundary=abc', '--abc\r\nContent-Disposition: form-data; name="a"\r\n\r\nb'],
      ['application/x-www-form-urlencoded', 'name=%E0%A4%A'],
      ['application/x-www-form-urlencoded', 'name=%ZZ'],
      ['application/json', '{"name":'],
    ])('%s with body %j', async (type, body) => {
      const before = await eventCount();
      for (const token of [null, api.rootToken]) {
        const res = await raw('POST', '/api/v4/groups', { token, type, body });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(invalidBody(type.split(';')[0]!));
      }
      expect(await eventCount()).toBe(before);
    });
  });
});

describe('body limits (item 3)', () => {
  it('refuses a body whose Content-Length is over FORGELOG_MAX_BODY_BYTES with 413, before authentication', async () => {
    const res = await raw('POST', '/api/v4/groups', { type: 'application/json', body: `{"name":"${'x'.repeat(MAX_BODY_BYTES)}"}` });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
  });

  it('answers 413 to a chunked body as soon as the limit is passed, without waiting for its end', async () => {
    const url = new URL(api.apiUrl);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: '/api/v4/groups', method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      // Twice the limit, and the request is never ended: only a server that stops reading answers.
      req.write(`{"name":"${'x'.repeat(MAX_BODY_BYTES * 2)}`);
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ message: '413 Request Entity Too Large' });
  });

  it('takes a chunked body under the limit', async () => {
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"message":"chunked"}`));
        controller.close();
      },
    });
    const res = await fetch(`${api.apiUrl}/user/status`, { method: 'PUT', headers: { 'private-token': user.token, 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { message: string }).message).toBe('chunked');
  });

  const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
  it.each([
    ['nested 33 levels', `{"message":"x","n":${nested(32)}}`, 'Parameters nested too deeply'],
    ['an array of 50,001 entries', `{"message":"x","n":[${Array(50_001).fill(0).join(',')}]}`, 'Array parameter too large'],
    ['an object of 50,001 entries', `{"message":"x",${Array.from({ length: 50_001 }, (_, i) => `"k${i}":0`).join(',')}}`, 'Hash parameter too large'],
  ])('refuses JSON %s with 400, before authentication', async (_, body, error) => {
    for (const token of [null, user.token]) {
      const res = await raw('PUT', '/api/v4/user/status', { token, type: 'application/json', body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }
  });

  it('takes JSON nested 32 levels and 50,000 entries', async () => {
    const res = await raw('PUT', '/api/v4/user/status', {
      token: user.token,
      type: 'application/json',
      body: `{"message":"deep","n":${nested(31)},"a":[${Array(50_000).fill(0).join(',')}]}`,
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('deep');
  });
});

describe('X-Request-Id (item 4)', () => {
  it.each([['abc-123_@Z', true], ['a'.repeat(255), true], ['a'.repeat(256), false], ['a b', false], ['<script>', false], ['é', false]])(
    '%j is kept: %s',
    async (id, kept) => {
      const res = await api.get('/version', { headers: { 'X-Request-Id': id } });
      const answered = res.headers.get('x-request-id')!;
      if (kept) expect(answered).toBe(id);
      else expect(answered).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('stores only the bounded id in the event metadata', async () => {
    const res = await api.put('/user/status', { message: 'id' }, { token: user.token, headers: { 'X-Request-Id': 'x'.repeat(10_000) } });
    expect(res.status).toBe(200);
    const events = await api.events(`user-${user.user.id}`);
    const last = events.at(-1)!;
    expect(last.metadata.request_id).toBe(res.headers.get('x-request-id'));
    expect(last.metadata.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('response headers and CORS (item 5)', () => {
  it.each([
    ['an answer', '/version', true],
    ['an error', '/version', false],
    ['a missing route', '/nothing-here', false],
  ])('%s carries GitLab cache, sniffing and framing headers', async (_, path, signedIn) => {
    const res = await api.get(path, signedIn ? {} : { token: null });
    expect(res.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
  });

  it('answers cross-origin API requests for any origin, exposing the pagination headers, without credentials', async () => {
    const res = await api.get('/users', { headers: { Origin: 'https://elsewhere.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBe('Link, X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page');
  });

  it('answers a preflight with 200, any method and the requested headers, before authentication', async () => {
    const res = await raw('OPTIONS', '/api/v4/projects/1/members', {
      headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'DELETE', 'Access-Control-Request-Headers': 'private-token, content-type' },
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('DELETE');
    expect(res.headers.get('access-control-allow-headers')).toBe('private-token, content-type');
  });

  it('answers OPTIONS without CORS as Grape does: 204 with Allow', async () => {
    const res = await raw('OPTIONS', '/api/v4/groups');
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toContain('POST');
    expect(res.headers.get('allow')).toContain('OPTIONS');
  });

  it('sends no CORS headers outside /api', async () => {
    const res = await raw('GET', '/-/liveness', { headers: { Origin: 'https://elsewhere.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('pagination parameters (item 6)', () => {
  it.each([
    [{ per_page: 'abc' }, 'per_page is invalid'],
    [{ page: 'x' }, 'page is invalid'],
    [{ page: 'x', per_page: '1.5' }, 'page is invalid, per_page is invalid'],
  ])('%j → 400 %s', async (query, error) => {
    for (const path of ['/users', '/groups', '/projects']) {
      const res = await api.get(path, { query });
      expect(res.status, path).toBe(400);
      expect(res.body).toEqual({ error });
    }
  });

  it('refuses per_page=abc on keyset pagination too', async () => {
    const res = await api.get('/projects', { query: { pagination: 'keyset', order_by: 'id', per_page: 'abc' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'per_page is invalid' });
  });

  it('keeps the defaults for an empty value and clamps out-of-range integers', async () => {
    const res = await api.get('/users', { query: { page: '', per_page: '1000' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-per-page')).toBe('100');
    expect(res.headers.get('x-page')).toBe('1');
  });
});
