import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

// GitLab 12 entities, field by field and in order (lib/api/entities.rb; EE adds the paid fields).
const BASIC = ['id', 'name', 'username', 'state', 'avatar_url', 'web_url'];
const USER = [...BASIC, 'created_at', 'bio', 'location', 'public_email', 'skype', 'linkedin', 'twitter', 'website_url', 'organization'];
const PUBLIC_ONLY = [
  'last_sign_in_at', 'confirmed_at', 'last_activity_on', 'email', 'theme_id', 'color_scheme_id', 'projects_limit',
  'current_sign_in_at', 'identities', 'can_create_group', 'can_create_project', 'two_factor_enabled', 'external', 'private_profile',
];
const MINUTES = ['shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit'];
const PUBLIC = [...USER, ...PUBLIC_ONLY, ...MINUTES];
const WITH_ADMIN = [...USER, ...PUBLIC_ONLY, 'is_admin', ...MINUTES, 'note'];
const withCustomAttributes = (keys: string[]) => [...keys.slice(0, 5), 'custom_attributes', ...keys.slice(5)];

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GRAVATAR = /^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/;

function expectTypes(user: Record<string, unknown>) {
  const types: Record<string, (v: unknown) => boolean> = {
    id: (v) => Number.isInteger(v),
    name: (v) => typeof v === 'string',
    username: (v) => typeof v === 'string',
    state: (v) => v === 'active' || v === 'blocked',
    avatar_url: (v) => typeof v === 'string' && GRAVATAR.test(v),
    web_url: (v) => typeof v === 'string' && v.endsWith(`/${user.username as string}`),
    created_at: (v) => typeof v === 'string' && ISO.test(v),
    email: (v) => typeof v === 'string',
    identities: (v) => Array.isArray(v),
    last_sign_in_at: (v) => v === null || typeof v === 'string',
    confirmed_at: (v) => v === null || (typeof v === 'string' && ISO.test(v)),
    last_activity_on: (v) => v === null || typeof v === 'string',
    current_sign_in_at: (v) => v === null || typeof v === 'string',
    note: (v) => v === null || typeof v === 'string',
  };
  for (const field of ['bio', 'location', 'public_email', 'skype', 'linkedin', 'twitter', 'website_url', 'organization']) types[field] = (v) => typeof v === 'string';
  for (const field of ['theme_id', 'color_scheme_id', 'projects_limit']) types[field] = (v) => Number.isInteger(v);
  for (const field of ['can_create_group', 'can_create_project', 'two_factor_enabled', 'external', 'private_profile', 'is_admin']) types[field] = (v) => typeof v === 'boolean';
  for (const field of MINUTES) types[field] = (v) => v === null || Number.isInteger(v);
  for (const [field, value] of Object.entries(user)) {
    if (types[field]) expect(types[field]!(value), `${field}: ${JSON.stringify(value)}`).toBe(true);
  }
}

let api: TestServer;
let regular: { user: any; token: string };
let suffix = 0;
const unique = (base: string) => `${base}${++suffix}x${process.pid}`;
/** A user created by root through the API (no token: cheaper than api.createUser). */
async function newUser(attributes: Record<string, unknown> = {}) {
  const username = (attributes.username as string | undefined) ?? unique('u');
  const res = await api.post('/users', { email: `${username}@example.com`, username, name: `User ${username}`, password: 'password123', skip_confirmation: true, ...attributes });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  api = await startTestServer();
  regular = await api.createUser({ username: unique('regular') });
});
afterAll(() => api.close());

// ───────────────────────────── Permission matrix ─────────────────────────────

describe('permissions', () => {
  interface Row {
    method: string;
    path: string;
    body?: unknown;
    anonymous: number;
    user: number;
    admin: number;
    /** Needs a user of its own (the admin's call deletes it). */
    fresh?: boolean;
  }
  // Statuses for an existing user (:id), per caller.
  const matrix: Row[] = [
    { method: 'GET', path: '/users', anonymous: 403, user: 200, admin: 200 },
    { method: 'GET', path: '/users?username=root', anonymous: 200, user: 200, admin: 200 },
    { method: 'GET', path: '/users/:id', anonymous: 200, user: 200, admin: 200 },
    { method: 'POST', path: '/users', body: { email: 'matrix@example.com', username: 'matrix', name: 'M', password: 'password123' }, anonymous: 401, user: 403, admin: 201 },
    { method: 'PUT', path: '/users/:id', body: { bio: 'matrix' }, anonymous: 401, user: 403, admin: 200 },
    { method: 'POST', path: '/users/:id/block', anonymous: 401, user: 403, admin: 201 },
    { method: 'POST', path: '/users/:id/unblock', anonymous: 401, user: 403, admin: 201 },
    { method: 'GET', path: '/user', anonymous: 401, user: 200, admin: 200 },
    { method: 'GET', path: '/user/status', anonymous: 401, user: 200, admin: 200 },
    { method: 'PUT', path: '/user/status', body: { message: 'hi' }, anonymous: 401, user: 200, admin: 200 },
    { method: 'GET', path: '/users/:id/status', anonymous: 200, user: 200, admin: 200 },
    { method: 'GET', path: '/users/:id/custom_attributes', anonymous: 403, user: 403, admin: 200 },
    { method: 'PUT', path: '/users/:id/custom_attributes/team', body: { value: 'blue' }, anonymous: 401, user: 403, admin: 200 },
    { method: 'GET', path: '/users/:id/custom_attributes/team', anonymous: 403, user: 403, admin: 200 },
    { method: 'DELETE', path: '/users/:id/custom_attributes/team', anonymous: 401, user: 403, admin: 204 },
    { method: 'GET', path: '/users/:id/impersonation_tokens', anonymous: 401, user: 403, admin: 200 },
    { method: 'POST', path: '/users/:id/impersonation_tokens', body: { name: 'm', scopes: ['api'] }, anonymous: 401, user: 403, admin: 201 },
    { method: 'POST', path: '/users/:id/personal_access_tokens', body: { name: 'm', scopes: ['api'] }, anonymous: 401, user: 403, admin: 201 },
    { method: 'DELETE', path: '/users/:id', anonymous: 401, user: 403, admin: 204, fresh: true },
  ];
  let shared: any;
  beforeAll(async () => {
    shared = await newUser();
    await api.put(`/users/${shared.id}/custom_attributes/team`, { value: 'red' });
  });
  it.each(matrix)('$method $path: anonymous $anonymous, regular user $user, admin $admin', async (row) => {
    const target = row.fresh ? await newUser() : shared;
    const url = row.path.replace(':id', String(target.id));
    const send = (token: string | null) => api.request(row.method, url, { token, ...(row.body === undefined ? {} : { body: row.body }) });
    const anon = await send(null);
    expect(anon.status, 'anonymous').toBe(row.anonymous);
    if (row.anonymous === 401) expect(anon.body).toEqual({ message: '401 Unauthorized' });
    if (row.anonymous === 403 && row.path !== '/users') expect(anon.body).toEqual({ message: '403 Forbidden' });
    const mine = await send(regular.token);
    expect(mine.status, 'regular user').toBe(row.user);
    if (row.user === 403) expect(mine.body).toEqual({ message: '403 Forbidden' });
    expect((await send(api.rootToken)).status, 'admin').toBe(row.admin);
  });
});

// ───────────────────────────── GET /users ─────────────────────────────

describe('GET /users', () => {
  describe('as an administrator', () => {
    it('lists every user with the admin view, newest first, with pagination headers', async () => {
      await newUser();
      const res = await api.get('/users', { query: { per_page: 2 } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.body).toHaveLength(2);
      for (const user of res.body) {
        expect(Object.keys(user)).toEqual(WITH_ADMIN);
        expectTypes(user);
      }
      expect(res.body[0].id).toBeGreaterThan(res.body[1].id);
      const total = Number(res.headers.get('x-total'));
      expect(total).toBeGreaterThanOrEqual(3);
      expect(res.headers.get('x-per-page')).toBe('2');
      expect(res.headers.get('x-page')).toBe('1');
      expect(res.headers.get('x-next-page')).toBe('2');
      expect(res.headers.get('x-prev-page')).toBe('');
      expect(res.headers.get('x-total-pages')).toBe(String(Math.ceil(total / 2)));
      expect(res.headers.get('link')).toContain(`<${api.apiUrl}/users?per_page=2&page=2>; rel="next"`);
      expect(res.headers.get('link')).toContain('rel="first"');
      expect(res.headers.get('link')).toContain('rel="last"');
    });

    it('orders by order_by and sort, with id as tie-breaker', async () => {
      const asc = await api.get('/users', { query: { order_by: 'username', sort: 'asc', per_page: 100 } });
      const names = asc.body.map((u: any) => u.username);
      expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
      const byId = await api.get('/users', { query: { sort: 'asc', per_page: 100 } });
      expect(byId.body[0].id).toBe(1);
    });

    it('filters by creation time (inclusive bounds)', async () => {
      const user = await newUser();
      const at = user.created_at;
      const exact = await api.get('/users', { query: { created_after: at, created_before: at } });
      expect(exact.body.map((u: any) => u.id)).toEqual([user.id]);
      const later = await api.get('/users', { query: { created_after: new Date(Date.parse(at) + 1).toISOString() } });
      expect(later.body.map((u: any) => u.id)).not.toContain(user.id);
    });

    it('filters external users and by identity (extern_uid case-insensitive)', async () => {
      const external = await newUser({ external: true, extern_uid: 'CN=Ext,DC=example', provider: 'ldapmain' });
      const res = await api.get('/users', { query: { external: true, per_page: 100 } });
      expect(res.body.every((u: any) => u.external === true)).toBe(true);
      expect(res.body.map((u: any) => u.id)).toContain(external.id);
      const identity = await api.get('/users', { query: { extern_uid: 'cn=ext,dc=example', provider: 'ldapmain' } });
      expect(identity.body.map((u: any) => u.id)).toEqual([external.id]);
      expect(identity.body[0].identities).toEqual([{ provider: 'ldapmain', extern_uid: 'CN=Ext,DC=example' }]);
      expect((await api.get('/users', { query: { extern_uid: 'cn=ext,dc=example', provider: 'github' } })).body).toEqual([]);
    });

    it('filters by two_factor and ignores an unknown value', async () => {
      expect((await api.get('/users', { query: { two_factor: 'enabled' } })).body).toEqual([]);
      const disabled = await api.get('/users', { query: { two_factor: 'disabled' } });
      const all = await api.get('/users');
      expect(disabled.headers.get('x-total')).toBe(all.headers.get('x-total'));
      expect((await api.get('/users', { query: { two_factor: 'sometimes' } })).headers.get('x-total')).toBe(all.headers.get('x-total'));
    });
  });

  describe('as a regular user', () => {
    it('lists users with the basic view only, newest first', async () => {
      const res = await api.get('/users', { token: regular.token });
      expect(res.status).toBe(200);
      for (const user of res.body) {
        expect(Object.keys(user)).toEqual(BASIC);
        expectTypes(user);
      }
      const ids = res.body.map((u: any) => u.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      expect(res.headers.get('x-total')).not.toBeNull();
    });

    it('ignores the administrator-only order, sort, dates, two_factor and custom attribute filters', async () => {
      const plain = await api.get('/users', { token: regular.token, query: { per_page: 100 } });
      const ignored = await api.get('/users', {
        token: regular.token,
        query: { per_page: 100, order_by: 'username', sort: 'asc', created_after: '2999-01-01T00:00:00Z', two_factor: 'enabled', 'custom_attributes[x]': 'y' },
      });
      expect(ignored.body).toEqual(plain.body);
    });

    it('is 403 for the external and identity filters', async () => {
      expect((await api.get('/users', { token: regular.token, query: { external: true } })).body).toEqual({ message: '403 Forbidden' });
      const identity = await api.get('/users', { token: regular.token, query: { extern_uid: 'x', provider: 'y' } });
      expect(identity.status).toBe(403);
      expect((await api.get('/users', { token: regular.token, query: { external: false } })).status).toBe(200);
    });
  });

  describe('anonymously', () => {
    it('is 403 without a username', async () => {
      for (const query of [{}, { username: '' }, { search: 'root' }] as Record<string, string>[]) {
        const res = await api.get('/users', { token: null, query });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ message: '403 Forbidden - Not authorized to access /api/v4/users' });
      }
    });
    it('finds one user by username, case-insensitively, in the basic view', async () => {
      const user = await newUser({ username: unique('CamelCase') });
      const res = await api.get('/users', { token: null, query: { username: user.username.toUpperCase() } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([{ id: user.id, name: user.name, username: user.username, state: 'active', avatar_url: user.avatar_url, web_url: user.web_url }]);
      expect(res.headers.get('x-total')).toBe('1');
      expect((await api.get('/users', { token: null, query: { username: 'nobody-at-all' } })).body).toEqual([]);
    });
    it('is 401 for the administrator filters', async () => {
      expect((await api.get('/users', { token: null, query: { username: 'root', external: true } })).status).toBe(401);
    });
  });

  describe('filters', () => {
    it('searches name and username (3+ characters anywhere), or the exact email', async () => {
      const tag = unique('zebra');
      const a = await newUser({ name: `Alpha ${tag}`, username: unique('alpha') });
      const b = await newUser({ name: 'Beta', username: `${tag}_b`, email: `${tag}@mail.example` });
      const ids = async (search: string, token = regular.token) => (await api.get('/users', { token, query: { search } })).body.map((u: any) => u.id).sort();
      expect(await ids(tag)).toEqual([a.id, b.id].sort());
      expect(await ids(tag.toUpperCase())).toEqual([a.id, b.id].sort());
      expect(await ids(`@${tag}`)).toEqual([a.id, b.id].sort());
      expect(await ids(`${tag}@mail.example`)).toEqual([b.id]);
      expect(await ids(`${tag}@mail`)).toEqual([]);
      // Words shorter than 3 characters only match a whole name or username.
      expect(await ids('al')).toEqual([]);
      expect(await ids('@')).toEqual([]);
    });

    it('ranks an exact name or username match first, then by name', async () => {
      const tag = unique('rank');
      const exact = await newUser({ name: 'Zed', username: tag });
      const partial = await newUser({ name: `Aaa ${tag}`, username: unique('p') });
      const res = await api.get('/users', { token: regular.token, query: { search: tag } });
      expect(res.body.map((u: any) => u.id)).toEqual([exact.id, partial.id]);
    });

    it('filters active and blocked users', async () => {
      const blocked = await newUser();
      await api.post(`/users/${blocked.id}/block`);
      const onlyBlocked = await api.get('/users', { token: regular.token, query: { blocked: true, per_page: 100 } });
      expect(onlyBlocked.body.map((u: any) => u.id)).toContain(blocked.id);
      expect(onlyBlocked.body.every((u: any) => u.state === 'blocked')).toBe(true);
      const active = await api.get('/users', { token: regular.token, query: { active: true, per_page: 100 } });
      expect(active.body.every((u: any) => u.state === 'active')).toBe(true);
      expect(active.body.map((u: any) => u.id)).not.toContain(blocked.id);
    });
  });

  describe('bad input', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ order_by: 'email' }, 'order_by does not have a valid value'],
      [{ sort: 'up' }, 'sort does not have a valid value'],
      [{ active: 'maybe' }, 'active is invalid'],
      [{ blocked: 'maybe' }, 'blocked is invalid'],
      [{ created_before: 'yesterday' }, 'created_before is invalid'],
      [{ with_custom_attributes: 'please' }, 'with_custom_attributes is invalid'],
      [{ extern_uid: 'x' }, 'extern_uid, provider provide all or none of parameters'],
    ];
    it.each(cases)('%j → 400 %s', async (query, error) => {
      const res = await api.get('/users', { query: query as Record<string, string> });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    });
    it('refuses an array where a string is expected', async () => {
      const res = await api.get('/users', { query: { username: ['a', 'b'] } });
      expect(res.body).toEqual({ error: 'username is invalid' });
    });
    it('refuses pagination that is not an integer, as Grape does (issue 8)', async () => {
      const res = await api.get('/users', { query: { page: 'x', per_page: '-3' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'page is invalid' });
    });
    it('treats out-of-range pagination as the defaults', async () => {
      const res = await api.get('/users', { query: { page: '0', per_page: '-3' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-per-page')).toBe('20');
    });
  });
});

// ───────────────────────────── GET /users/:id ─────────────────────────────

describe('GET /users/:id', () => {
  it('shows the User view to a regular user and to anonymous callers', async () => {
    const user = await newUser({ bio: 'Hi', location: 'Lisbon' });
    for (const token of [regular.token, null]) {
      const res = await api.get(`/users/${user.id}`, { token });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(USER);
      expectTypes(res.body);
      expect(res.body).toMatchObject({ id: user.id, username: user.username, bio: 'Hi', location: 'Lisbon', created_at: user.created_at });
    }
  });

  it('hides created_at of a private or blocked profile from others (UserPolicy :read_user_profile)', async () => {
    const hidden = await api.createUser({ username: unique('private'), private_profile: true });
    const res = await api.get(`/users/${hidden.user.id}`, { token: regular.token });
    expect(Object.keys(res.body)).toEqual(USER.filter((k) => k !== 'created_at'));
    const self = await api.get(`/users/${hidden.user.id}`, { token: hidden.token });
    expect(self.body.created_at).toBe(hidden.user.created_at);
    const blocked = await newUser();
    await api.post(`/users/${blocked.id}/block`);
    expect((await api.get(`/users/${blocked.id}`, { token: null })).body.created_at).toBeUndefined();
  });

  it('shows administrators the admin view', async () => {
    const user = await newUser();
    const res = await api.get(`/users/${user.id}`);
    expect(Object.keys(res.body)).toEqual(WITH_ADMIN);
    expectTypes(res.body);
    expect(res.body).toEqual(user);
  });

  it('answers 404 for an unknown or absurd id, and no route for a non-numeric one', async () => {
    for (const id of ['999999', '99999999999999999999']) {
      const res = await api.get(`/users/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
    }
    for (const id of ['abc', '-1', '1e3']) {
      const res = await api.get(`/users/${id}`, { token: null });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: '404 Not Found' });
    }
  });
});

// ───────────────────────────── POST /users ─────────────────────────────

describe('POST /users', () => {
  describe('as an administrator', () => {
    it('creates the user: 201 with the admin view, the event, and the same user on GET', async () => {
      const username = unique('Created');
      const res = await api.post('/users', {
        email: `${username}@Example.COM`,
        username,
        name: 'Created User',
        password: 'secret-password',
        skype: 'sk',
        linkedin: 'li',
        twitter: 'tw',
        website_url: 'https://example.com',
        organization: 'Org',
        projects_limit: 5,
        bio: 'bio',
        location: 'loc',
        admin: true,
        can_create_group: false,
        external: true,
        private_profile: true,
        skip_confirmation: true,
        note: 'admin note',
        shared_runners_minutes_limit: 120,
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(WITH_ADMIN);
      expectTypes(res.body);
      expect(res.body).toMatchObject({
        username,
        name: 'Created User',
        state: 'active',
        email: `${username.toLowerCase()}@example.com`,
        web_url: `${api.url}/${username}`,
        skype: 'sk',
        linkedin: 'li',
        twitter: 'tw',
        website_url: 'https://example.com',
        organization: 'Org',
        projects_limit: 5,
        bio: 'bio',
        location: 'loc',
        public_email: '',
        is_admin: true,
        can_create_group: false,
        can_create_project: true,
        external: true,
        private_profile: true,
        two_factor_enabled: false,
        identities: [],
        theme_id: 1,
        color_scheme_id: 1,
        note: 'admin note',
        shared_runners_minutes_limit: 120,
        extra_shared_runners_minutes_limit: null,
        last_sign_in_at: null,
        current_sign_in_at: null,
        last_activity_on: null,
      });
      expect(res.body.confirmed_at).toMatch(ISO);
      expect((await api.get(`/users/${res.body.id}`)).body).toEqual(res.body);
      const events = await api.events(`user-${res.body.id}`);
      expect(events.map((e) => e.type)).toEqual(['UserCreated']);
      expect(events[0]!.data).toMatchObject({ id: res.body.id, username, email: `${username.toLowerCase()}@example.com`, confirmed: true, password_reset_required: false });
      expect(events[0]!.data.password_hash).toMatch(/^scrypt\$/);
      expect(JSON.stringify(events)).not.toContain('secret-password');
      expect(events[0]!.metadata).toMatchObject({ actor_id: 1, actor_username: 'root' });
    });

    it('defaults to an unconfirmed, non-admin user with GitLab’s defaults', async () => {
      const username = unique('defaults');
      const res = await api.post('/users', { email: `${username}@example.com`, username, name: 'D', password: 'password123' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ is_admin: false, can_create_group: true, external: false, private_profile: false, projects_limit: 100000, confirmed_at: null, note: null });
    });

    it('accepts form-encoded parameters', async () => {
      const username = unique('form');
      const res = await api.post('/users', undefined, { form: { email: `${username}@example.com`, username, name: 'Form', password: 'password123', admin: 'true' } });
      expect(res.status).toBe(201);
      expect(res.body.is_admin).toBe(true);
    });

    it('sets a random password with reset_password or force_random_password, ignoring password', async () => {
      for (const flags of [{ reset_password: true }, { force_random_password: true, password: 'short' }]) {
        const username = unique('random');
        const res = await api.post('/users', { email: `${username}@example.com`, username, name: 'R', ...flags });
        expect(res.status, JSON.stringify(flags)).toBe(201);
        expect((await api.events(`user-${res.body.id}`))[0]!.data.password_reset_required).toBe(true);
      }
    });

    it('stores an identity from extern_uid and provider', async () => {
      const username = unique('ident');
      const res = await api.post('/users', { email: `${username}@example.com`, username, name: 'I', password: 'password123', extern_uid: '42', provider: 'github' });
      expect(res.body.identities).toEqual([{ provider: 'github', extern_uid: '42' }]);
    });
  });

  describe('conflicts', () => {
    it('is 409 for a taken email (case-insensitive), reported before a taken username', async () => {
      const taken = await newUser();
      const res = await api.post('/users', { email: taken.email.toUpperCase(), username: taken.username, name: 'X', password: 'password123' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Email has already been taken' });
    });
    it('is 409 for a taken username (case-insensitive)', async () => {
      const taken = await newUser();
      const res = await api.post('/users', { email: `${unique('other')}@example.com`, username: taken.username.toUpperCase(), name: 'X', password: 'password123' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Username has already been taken' });
    });
    it('reports the conflict even when another attribute is invalid', async () => {
      const taken = await newUser();
      const res = await api.post('/users', { email: taken.email, username: unique('fresh'), name: 'X', password: 'short' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ message: 'Email has already been taken' });
    });
  });

  describe('validation', () => {
    const valid = () => {
      const username = unique('v');
      return { email: `${username}@example.com`, username, name: 'Valid', password: 'password123' };
    };
    it('reports Grape’s errors in declaration order, at_least_one_of included', async () => {
      const res = await api.post('/users', {});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'email is missing, password, reset_password, force_random_password are missing, at least one parameter must be provided, name is missing, username is missing',
      });
      const noPassword = await api.post('/users', { ...valid(), password: undefined });
      expect(noPassword.body).toEqual({ error: 'password, reset_password, force_random_password are missing, at least one parameter must be provided' });
    });
    it('needs extern_uid and provider together', async () => {
      const res = await api.post('/users', { ...valid(), provider: 'github' });
      expect(res.body).toEqual({ error: 'extern_uid, provider provide all or none of parameters' });
    });
    const invalid: [string, Record<string, unknown>, Record<string, string[]>][] = [
      ['a short password', { password: 'x'.repeat(7) }, { password: ['is too short (minimum is 8 characters)'] }],
      ['a long password', { password: 'x'.repeat(129) }, { password: ['is too long (maximum is 128 characters)'] }],
      ['an empty password', { password: '' }, { password: ["can't be blank"] }],
      ['reset_password false without a password', { password: undefined, reset_password: false }, { password: ["can't be blank"] }],
      ['an invalid email', { email: 'not-an-email' }, { email: ['is invalid'] }],
      ['a blank name', { name: ' ' }, { name: ["can't be blank"] }],
      ['a negative projects limit', { projects_limit: -1 }, { projects_limit: ['must be greater than or equal to 0'] }],
      ['another person’s public email', { public_email: 'someone@example.com' }, { public_email: ['is not an email you own'] }],
      [
        'a bad username',
        { username: 'bad name' },
        { username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."] },
      ],
    ];
    it.each(invalid)('is 400 for %s', async (_, fields, message) => {
      const res = await api.post('/users', { ...valid(), ...fields });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message });
    });
    it('takes a 128-character password', async () => {
      expect((await api.post('/users', { ...valid(), password: 'x'.repeat(128) })).status).toBe(201);
    });
    const wrongTypes: [Record<string, unknown>, string][] = [
      [{ email: ['a@example.com'] }, 'email is invalid'],
      [{ admin: 'maybe' }, 'admin is invalid'],
      [{ projects_limit: 'many' }, 'projects_limit is invalid'],
      [{ name: { first: 'a' } }, 'name is invalid'],
      [{ skip_confirmation: [true] }, 'skip_confirmation is invalid'],
    ];
    it.each(wrongTypes)('is 400 for wrong types: %j', async (fields, error) => {
      const res = await api.post('/users', { ...valid(), ...fields });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    });
    it('is 400 for a body that is not JSON', async () => {
      const broken = await fetch(`${api.apiUrl}/users`, { method: 'POST', headers: { 'PRIVATE-TOKEN': api.rootToken, 'content-type': 'application/json' }, body: '{"email":' });
      expect(broken.status).toBe(400);
      // Grape's InvalidMessageBody, word for word.
      expect(await broken.json()).toEqual({
        error:
          "\nProblem:\n  message body does not match declared format\nResolution:\n  when specifying application/json as content-type, you must pass valid application/json in the request's 'body' ",
      });
    });
    it('validates before it checks for an administrator (Grape order), after authentication', async () => {
      expect((await api.post('/users', {}, { token: regular.token })).status).toBe(400);
      expect((await api.post('/users', {}, { token: null })).status).toBe(401);
    });
  });
});

// ───────────────────────────── PUT /users/:id ─────────────────────────────

describe('PUT /users/:id', () => {
  it('updates the given fields only: 200 admin view, one event with the changes, the same on GET', async () => {
    const user = await newUser();
    const res = await api.put(`/users/${user.id}`, { name: 'Renamed', bio: 'New bio', organization: user.organization, admin: true, can_create_group: false, projects_limit: 3 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(WITH_ADMIN);
    expect(res.body).toMatchObject({ name: 'Renamed', bio: 'New bio', is_admin: true, can_create_group: false, projects_limit: 3, username: user.username });
    expect((await api.get(`/users/${user.id}`)).body).toEqual(res.body);
    const events = await api.events(`user-${user.id}`);
    expect(events.map((e) => e.type)).toEqual(['UserCreated', 'UserProfileUpdated']);
    expect(events[1]!.data).toEqual({ id: user.id, changes: { name: 'Renamed', bio: 'New bio', is_admin: true, can_create_group: false, projects_limit: 3 }, previous_email: null });
  });

  it('appends nothing when nothing changes (python-gitlab always sends email, username and name)', async () => {
    const user = await newUser();
    const res = await api.put(`/users/${user.id}`, { email: user.email, username: user.username, name: user.name });
    expect(res.status).toBe(200);
    expect((await api.events(`user-${user.id}`)).map((e) => e.type)).toEqual(['UserCreated']);
  });

  it('keeps the email until it is confirmed, unless skip_reconfirmation', async () => {
    const user = await newUser();
    const pending = await api.put(`/users/${user.id}`, { email: `${unique('pending')}@example.com` });
    expect(pending.status).toBe(200);
    expect(pending.body.email).toBe(user.email);
    expect((await api.events(`user-${user.id}`)).at(-1)!.type).toBe('UserEmailChangeRequested');
    const fresh = `${unique('direct')}@example.com`;
    const direct = await api.put(`/users/${user.id}`, { email: fresh.toUpperCase(), skip_reconfirmation: true });
    expect(direct.body.email).toBe(fresh);
    // The old email is free again.
    expect((await api.post('/users', { email: user.email, username: unique('reuse'), name: 'R', password: 'password123' })).status).toBe(201);
  });

  it('changes the password and expires it (an event, never the password)', async () => {
    const user = await newUser();
    expect((await api.put(`/users/${user.id}`, { password: 'another-password' })).status).toBe(200);
    const last = (await api.events(`user-${user.id}`)).at(-1)!;
    expect(last.type).toBe('UserPasswordChanged');
    expect(last.data).toMatchObject({ id: user.id, expires_now: true });
    expect(JSON.stringify(last)).not.toContain('another-password');
    const short = await api.put(`/users/${user.id}`, { password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body).toEqual({ message: { password: ['is too short (minimum is 8 characters)'] } });
  });

  it('replaces the identity of the same provider', async () => {
    const user = await newUser({ extern_uid: '1', provider: 'github' });
    const res = await api.put(`/users/${user.id}`, { extern_uid: '2', provider: 'github' });
    expect(res.body.identities).toEqual([{ provider: 'github', extern_uid: '2' }]);
    const two = await api.put(`/users/${user.id}`, { extern_uid: 'x', provider: 'ldapmain' });
    expect(two.body.identities).toEqual([{ provider: 'github', extern_uid: '2' }, { provider: 'ldapmain', extern_uid: 'x' }]);
  });

  it('accepts the user’s own email as public email', async () => {
    const user = await newUser();
    expect((await api.put(`/users/${user.id}`, { public_email: user.email })).body.public_email).toBe(user.email);
    const other = await api.put(`/users/${user.id}`, { public_email: 'else@example.com' });
    expect(other.body).toEqual({ message: { public_email: ['is not an email you own'] } });
  });

  it('is 409 for a taken email, then a taken username, before other validation', async () => {
    const [user, other] = [await newUser(), await newUser()];
    const email = await api.put(`/users/${user.id}`, { email: other.email.toUpperCase(), username: other.username, name: '' });
    expect(email.status).toBe(409);
    expect(email.body).toEqual({ message: 'Email has already been taken' });
    const username = await api.put(`/users/${user.id}`, { username: other.username.toUpperCase() });
    expect(username.body).toEqual({ message: 'Username has already been taken' });
    expect((await api.put(`/users/${user.id}`, { username: user.username.toUpperCase() })).status).toBe(200);
  });

  it('answers 404 for an unknown user and for a non-numeric id', async () => {
    expect((await api.put('/users/999999', { bio: 'x' })).body).toEqual({ message: '404 User Not Found' });
    expect((await api.put('/users/99999999999999999999', { bio: 'x' })).body).toEqual({ message: '404 User Not Found' });
    expect((await api.put('/users/root', { bio: 'x' })).body).toEqual({ error: '404 Not Found' });
  });

  it('takes gitbeaker-style multipart strings', async () => {
    const user = await newUser();
    const form = new FormData();
    form.append('bio', 'multipart');
    form.append('external', 'true');
    const res = await fetch(`${api.apiUrl}/users/${user.id}`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': api.rootToken }, body: form });
    expect(await res.json()).toMatchObject({ bio: 'multipart', external: true });
  });

  it('is 400 for wrong types', async () => {
    const user = await newUser();
    expect((await api.put(`/users/${user.id}`, { private_profile: 'sometimes', bio: ['x'] })).body).toEqual({ error: 'bio is invalid, private_profile is invalid' });
  });
});

// ───────────────────────────── DELETE /users/:id ─────────────────────────────

describe('DELETE /users/:id', () => {
  it('deletes: 204 without a body, 404 afterwards, UserDeleted, and the username and email are free again', async () => {
    const user = await newUser();
    const res = await api.del(`/users/${user.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(`/users/${user.id}`)).status).toBe(404);
    const events = await api.events(`user-${user.id}`);
    expect(events.at(-1)).toMatchObject({ type: 'UserDeleted', data: { id: user.id, hard_delete: false } });
    expect((await api.post('/users', { email: user.email, username: user.username, name: 'Again', password: 'password123' })).status).toBe(201);
    expect((await api.del(`/users/${user.id}`)).body).toEqual({ message: '404 User Not Found' });
  });

  it('records hard_delete', async () => {
    const user = await newUser();
    expect((await api.del(`/users/${user.id}`, { query: { hard_delete: true } })).status).toBe(204);
    expect((await api.events(`user-${user.id}`)).at(-1)!.data).toEqual({ id: user.id, hard_delete: true });
  });

  it('is 412 when the user changed after If-Unmodified-Since', async () => {
    const user = await newUser();
    const res = await api.del(`/users/${user.id}`, { headers: { 'If-Unmodified-Since': new Date(Date.parse(user.created_at) - 60_000).toUTCString() } });
    expect(res.status).toBe(412);
    expect(res.body).toEqual({ message: '412 Precondition Failed' });
  });

  it('is 400 for a bad hard_delete, 404 for a non-numeric id', async () => {
    expect((await api.del('/users/1', { query: { hard_delete: 'perhaps' } })).body).toEqual({ error: 'hard_delete is invalid' });
    expect((await api.del('/users/x')).body).toEqual({ error: '404 Not Found' });
  });
});

// ───────────────────────────── Block / unblock ─────────────────────────────

describe('POST /users/:id/block and /unblock', () => {
  it('answers true when the state changes and false when it does not', async () => {
    const target = await api.createUser({ username: unique('blockme') });
    const id = target.user.id;
    expect(await api.post(`/users/${id}/block`)).toMatchObject({ status: 201, body: true });
    expect(await api.post(`/users/${id}/block`)).toMatchObject({ status: 201, body: false });
    expect((await api.get(`/users/${id}`)).body.state).toBe('blocked');
    const denied = await api.get('/user', { token: target.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: '403 Forbidden - Your account has been blocked.' });
    expect(await api.post(`/users/${id}/unblock`)).toMatchObject({ status: 201, body: true });
    expect(await api.post(`/users/${id}/unblock`)).toMatchObject({ status: 201, body: false });
    expect((await api.get('/user', { token: target.token })).status).toBe(200);
    expect((await api.events(`user-${id}`)).map((e) => e.type)).toEqual(['UserCreated', 'PersonalAccessTokenCreated', 'UserBlocked', 'UserUnblocked']);
    expect((await api.post('/users/999999/block')).body).toEqual({ message: '404 User Not Found' });
  });
});

// ───────────────────────────── GET /user ─────────────────────────────

describe('GET /user', () => {
  it('shows a regular user the UserPublic view of themselves', async () => {
    const res = await api.get('/user', { token: regular.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(PUBLIC);
    expectTypes(res.body);
    expect(res.body).toMatchObject({ id: regular.user.id, username: regular.user.username, email: regular.user.email });
  });
  it('shows an administrator the admin view', async () => {
    const res = await api.get('/user');
    expect(Object.keys(res.body)).toEqual(WITH_ADMIN);
    expect(res.body).toMatchObject({ id: 1, username: 'root', is_admin: true, email: 'admin@example.com' });
  });
  it('takes a read_user token', async () => {
    const { token } = await api.createUser({ username: unique('reader') }, ['read_user']);
    expect((await api.get('/user', { token })).status).toBe(200);
  });
  it('is 401 anonymously and with a bad token', async () => {
    expect((await api.get('/user', { token: null })).body).toEqual({ message: '401 Unauthorized' });
    expect((await api.get('/user', { token: 'bogus' })).body).toEqual({ message: '401 Unauthorized' });
  });
  it('resolves a sudo user with an absurd id to 404, not an error', async () => {
    const res = await api.get('/user', { query: { sudo: '99999999999999999999' } });
    expect(res.status).toBe(404);
  });
});

// ───────────────────────────── Free tier ─────────────────────────────

describe('on the free tier', () => {
  it('leaves out the paid fields (minutes limits, note) and ignores them on input', async () => {
    const user = await onPlan(api, 'free', async () => {
      const { user, token } = await api.createUser({ username: unique('free'), note: 'ignored' });
      expect(Object.keys(user)).toEqual([...USER, ...PUBLIC_ONLY, 'is_admin']);
      expect(Object.keys((await api.get('/user', { token })).body)).toEqual([...USER, ...PUBLIC_ONLY]);
      return user;
    });
    expect((await api.get(`/users/${user.id}`)).body.note).toBeNull();
  });
});

describe('with_custom_attributes', () => {
  it('adds custom_attributes after avatar_url for administrators only', async () => {
    const user = await newUser();
    await api.put(`/users/${user.id}/custom_attributes/team`, { value: 'blue' });
    const single = await api.get(`/users/${user.id}`, { query: { with_custom_attributes: true } });
    expect(Object.keys(single.body)).toEqual(withCustomAttributes(WITH_ADMIN));
    expect(single.body.custom_attributes).toEqual([{ key: 'team', value: 'blue' }]);
    const list = await api.get('/users', { query: { with_custom_attributes: true, username: user.username } });
    expect(Object.keys(list.body[0])).toEqual(withCustomAttributes(WITH_ADMIN));
    const other = await api.get('/users', { query: { with_custom_attributes: true, per_page: 100 } });
    expect(other.body.every((u: any) => Array.isArray(u.custom_attributes))).toBe(true);
    expect((await api.get(`/users/${user.id}`, { token: regular.token, query: { with_custom_attributes: true } })).body.custom_attributes).toBeUndefined();
    expect(Object.keys((await api.get('/users', { token: regular.token, query: { with_custom_attributes: true } })).body[0])).toEqual(BASIC);
  });
});

// ───────────────────────────── Any input ─────────────────────────────

describe('bad input of any shape', () => {
  const FIELDS = [
    'email', 'username', 'name', 'password', 'reset_password', 'force_random_password', 'skip_confirmation', 'skip_reconfirmation',
    'admin', 'external', 'projects_limit', 'extern_uid', 'provider', 'bio', 'public_email', 'private_profile', 'note',
    'emoji', 'message', 'value', 'scopes', 'expires_at', 'hard_delete', 'state', 'search', 'order_by', 'sort',
    'created_before', 'with_custom_attributes', 'custom_attributes', 'page', 'per_page',
  ];
  const ROUTES: [string, string][] = [
    ['GET', '/users'],
    ['POST', '/users'],
    ['GET', '/users/:id'],
    ['PUT', '/users/:id'],
    ['DELETE', '/users/:id'],
    ['POST', '/users/:id/block'],
    ['PUT', '/user/status'],
    ['GET', '/users/:id/status'],
    ['GET', '/users/:id/custom_attributes/:key'],
    ['PUT', '/users/:id/custom_attributes/:key'],
    ['DELETE', '/users/:id/custom_attributes/:key'],
    ['GET', '/users/:id/impersonation_tokens'],
    ['POST', '/users/:id/impersonation_tokens'],
    ['GET', '/users/:id/impersonation_tokens/:key'],
    ['POST', '/users/:id/personal_access_tokens'],
  ];
  it('answers a 2xx or a 4xx with a GitLab JSON body, never a 5xx', async () => {
    // Never root (id 1): a random PUT must not take its administrator rights away.
    const victim = await newUser();
    const segment = fc.oneof(
      fc.constant(String(victim.id)),
      fc.constantFrom('0', '-1', '2147483648', '99999999999999999999', '1e3', 'abc', '%E2%9C%93', '%2F', '.', ' '),
      fc.string({ minLength: 1, maxLength: 8 }).map(encodeURIComponent),
    );
    const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string(), fc.constantFrom('', 'true', '2999-01-01', 'x'.repeat(300)));
    const body = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 6 })), value, { maxKeys: 5 });
    const query = fc.dictionary(fc.constantFrom(...FIELDS), fc.oneof(fc.string({ maxLength: 12 }), fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })), { maxKeys: 3 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES), segment, segment, body, query, fc.boolean(), async ([method, template], id, key, json, q, asJson) => {
        const path = template.replace(':id', id).replace(':key', key);
        const url = new URL(`${api.apiUrl}${path}`);
        for (const [k, v] of Object.entries(q)) for (const one of [v].flat()) url.searchParams.append(Array.isArray(v) ? `${k}[]` : k, one);
        const init: RequestInit = { method, headers: { 'PRIVATE-TOKEN': api.rootToken } };
        if (method !== 'GET') {
          (init.headers as Record<string, string>)['content-type'] = asJson ? 'application/json' : 'application/x-www-form-urlencoded';
          init.body = asJson ? JSON.stringify(json) : new URLSearchParams(Object.entries(json).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v) ?? ''])).toString();
        }
        const res = await fetch(url, init);
        const text = await res.text();
        expect(res.status, `${method} ${url.pathname}${url.search} ${String(init.body ?? '')} → ${text}`).toBeLessThan(500);
        if (res.status >= 400) {
          const parsed = JSON.parse(text) as Record<string, unknown>;
          expect('message' in parsed || 'error' in parsed, text).toBe(true);
        }
      }),
      { numRuns: 100, seed: 4242 },
    );
  });
});
