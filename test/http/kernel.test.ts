import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEnv } from '../../src/http/kernel/context.js';
import { paginate } from '../../src/http/kernel/pagination.js';
import { startTestServer, type RequestOptions, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

describe('GET /version', () => {
  it('answers the version for a signed-in user, exactly application/json', async () => {
    const res = await api.get('/version');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.body).toEqual({ version: expect.stringMatching(/^12\./), revision: expect.any(String) });
  });
  it('is 401 anonymously', async () => {
    const res = await api.get('/version', { token: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: '401 Unauthorized' });
  });
});

describe('health checks', () => {
  it('answers liveness, readiness and health', async () => {
    expect((await api.get('/-/liveness', { token: null })).status).toBe(200);
    const readiness = await api.get('/-/readiness', { token: null });
    expect(readiness.status).toBe(200);
    expect(readiness.body.status).toBe('ok');
    expect((await api.get('/-/health', { token: null })).text).toBe('GitLab OK');
  });
});

describe('authentication', () => {
  it('accepts the token in every place GitLab reads it', async () => {
    const t = api.rootToken;
    for (const options of <RequestOptions[]>[
      { token: null, headers: { 'PRIVATE-TOKEN': t } },
      { token: null, headers: { 'private-token': t } },
      { token: null, headers: { Authorization: `Bearer ${t}` } },
      { token: null, query: { private_token: t } },
      { token: null, query: { access_token: t } },
    ]) {
      const res = await api.get('/user', options);
      expect(res.status, JSON.stringify(options)).toBe(200);
      expect(res.body.username).toBe('root');
    }
  });

  it('answers 401 for an unknown token even where anonymous access is allowed', async () => {
    const res = await api.get('/users', { token: 'nope', query: { username: 'root' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: '401 Unauthorized' });
  });

  it('answers insufficient_scope for a token without the endpoint scope', async () => {
    const { token } = await api.createUser({}, ['read_user']);
    const res = await api.put('/user/status', { message: 'hi' }, { token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: 'api',
    });
    expect((await api.get('/user', { token })).status).toBe(200);
  });
});

describe('sudo', () => {
  it('acts as another user by id or case-insensitive username, header or parameter', async () => {
    const { user } = await api.createUser({ username: 'SudoTarget' });
    expect((await api.get('/user', { headers: { Sudo: String(user.id) } })).body.username).toBe('SudoTarget');
    expect((await api.get('/user', { query: { sudo: 'sudotarget' } })).body.username).toBe('SudoTarget');
  });
  it('is 403 for a non-admin', async () => {
    const { token } = await api.createUser({}, ['api', 'sudo']);
    const res = await api.get('/user', { token, query: { sudo: 'root' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden - Must be admin to use sudo' });
  });
  it('needs the sudo scope', async () => {
    const minted = await api.post('/users/1/personal_access_tokens', { name: 'nosudo', scopes: ['api'] });
    const res = await api.get('/user', { token: minted.body.token, query: { sudo: 'root' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'insufficient_scope', scope: 'sudo' });
  });
  it('is 404 for an unknown user', async () => {
    const res = await api.get('/user', { query: { sudo: 'ghost' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: "404 User with ID or username 'ghost' Not Found" });
  });
  it('records the acting user and the sudo origin on events', async () => {
    const { user } = await api.createUser();
    const res = await api.put('/user/status', { message: 'via sudo' }, { query: { sudo: user.username }, headers: { 'user-agent': 'python-gitlab/3.12.0' } });
    expect(res.status).toBe(200);
    const events = await api.events(`user-${user.id}`);
    const last = events.at(-1)!;
    expect(last.type).toBe('UserStatusSet');
    expect(last.metadata).toMatchObject({ actor_id: user.id, sudo_from_id: 1, user_agent: 'python-gitlab/3.12.0', request_id: res.headers.get('x-request-id') });
    // The test client connects over loopback.
    expect(last.metadata.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$|^::1$/);
  });
  it('keeps the first 512 characters of a user agent', async () => {
    const { user } = await api.createUser();
    const res = await api.put('/user/status', { message: 'long agent' }, { query: { sudo: user.username }, headers: { 'user-agent': `agent/${'x'.repeat(2000)}` } });
    expect(res.status).toBe(200);
    const last = (await api.events(`user-${user.id}`)).at(-1)!;
    expect(last.metadata.user_agent).toBe(`agent/${'x'.repeat(2000)}`.slice(0, 512));
  });
});

describe('offset pagination', () => {
  it('sets every header and Link, on the external URL, carrying the request parameters', async () => {
    await api.createUser();
    await api.createUser();
    const res = await api.get('/users', { query: { per_page: 1, page: 2, active: true } });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    const total = Number(res.headers.get('x-total'));
    expect(total).toBeGreaterThanOrEqual(3);
    expect(res.headers.get('x-total-pages')).toBe(String(total));
    expect(res.headers.get('x-per-page')).toBe('1');
    expect(res.headers.get('x-page')).toBe('2');
    expect(res.headers.get('x-next-page')).toBe('3');
    expect(res.headers.get('x-prev-page')).toBe('1');
    expect(res.headers.get('link')).toBe(
      [
        `<${api.apiUrl}/users?per_page=1&page=1&active=true>; rel="prev"`,
        `<${api.apiUrl}/users?per_page=1&page=3&active=true>; rel="next"`,
        `<${api.apiUrl}/users?per_page=1&page=1&active=true>; rel="first"`,
        `<${api.apiUrl}/users?per_page=1&page=${total}&active=true>; rel="last"`,
      ].join(', '),
    );
  });

  it('has no previous or next page past the last one (Kaminari)', async () => {
    const res = await api.get('/users', { query: { per_page: 1, page: 999 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.get('x-prev-page')).toBe('');
    expect(res.headers.get('x-next-page')).toBe('');
    expect(res.headers.get('link')).not.toContain('rel="prev"');
  });

  describe('past a count limit (GitLab\'s api_kaminari_count_with_limit)', () => {
    // The feeds paginate with COUNT_LIMIT (10,000); the same code with a limit of 2 over the users.
    const listUsers = async (query: string) => {
      const app = new Hono<AppEnv>();
      app.use(async (c, next) => {
        c.set('app', api.runtime.app);
        await next();
      });
      app.get('/users', async (c) => c.json(await paginate(c, api.runtime.app.db.selectFrom('users').select('id'), (q) => q.orderBy('id'), { countLimit: 2 })));
      const res = await app.request(`http://forgelog.test/users?${query}`);
      return { headers: res.headers, body: (await res.json()) as { id: number }[] };
    };

    it('drops X-Total, X-Total-Pages and the last link, and finds the next page by reading one row more', async () => {
      for (let i = 0; i < 3; i++) await api.createUser();
      const { headers, body } = await listUsers('per_page=1&page=2');
      expect(body).toHaveLength(1);
      expect(headers.get('x-total')).toBeNull();
      expect(headers.get('x-total-pages')).toBeNull();
      expect(headers.get('x-page')).toBe('2');
      expect(headers.get('x-next-page')).toBe('3');
      expect(headers.get('x-prev-page')).toBe('1');
      const link = headers.get('link')!;
      expect(link).toContain('rel="prev"');
      expect(link).toContain('rel="next"');
      expect(link).toContain('rel="first"');
      expect(link).not.toContain('rel="last"');
    });

    it('has no next page on the last one', async () => {
      const all = await api.runtime.app.db.selectFrom('users').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      const { headers, body } = await listUsers(`per_page=1&page=${all.n}`);
      expect(body).toHaveLength(1);
      expect(headers.get('x-next-page')).toBe('');
      expect(headers.get('link')).not.toContain('rel="next"');
    });

    it('keeps the counts while the list is within the limit', async () => {
      const { headers, body } = await listUsers('per_page=2&page=1');
      expect(body).toHaveLength(2);
      expect(headers.get('x-total')).toBeNull(); // more than two users exist
      const few = new Hono<AppEnv>();
      few.use(async (c, next) => {
        c.set('app', api.runtime.app);
        await next();
      });
      few.get('/one', async (c) => c.json(await paginate(c, api.runtime.app.db.selectFrom('users').select('id').where('id', '=', 1), (q) => q, { countLimit: 2 })));
      const res = await few.request('http://forgelog.test/one');
      expect(res.headers.get('x-total')).toBe('1');
      expect(res.headers.get('x-total-pages')).toBe('1');
      expect(res.headers.get('link')).toContain('rel="last"');
    });
  });

  it('clamps per_page to 100 and treats page < 1 as 1', async () => {
    const res = await api.get('/users', { query: { per_page: 500, page: 0 } });
    expect(res.headers.get('x-per-page')).toBe('100');
    expect(res.headers.get('x-page')).toBe('1');
  });
});

describe('routing', () => {
  it('answers unknown routes with GitLab 404 body', async () => {
    const res = await api.get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: '404 Not Found' });
  });
  it('answers 405 for a known path with another method', async () => {
    const res = await api.request('PATCH', '/user');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ error: '405 Not Allowed' });
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
  it('accepts a .json suffix and echoes X-Request-Id', async () => {
    const res = await api.get('/user.json', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.status).toBe(200);
    expect(res.body.username).toBe('root');
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect((await api.get('/user')).headers.get('x-request-id')).toMatch(/[0-9a-f-]{36}/);
  });
});
