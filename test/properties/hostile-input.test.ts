import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { expectAuthenticationIntact } from '../support/auth-intact.js';
import { APP_ROUTES } from '../support/routes.js';

/**
 * Issue 8, item 18: a net for every endpoint. The routes come from the app itself, so a new
 * area is covered without a line here. Each route gets generated hostile requests, as an
 * anonymous caller and as an administrator, and every answer must be: never a 5xx; a 4xx in
 * one of GitLab's bodies; no event appended by a rejected request; and authentication means
 * afterwards what it meant before. hostile-long-strings.ts (run in shards) sends every declared string
 * parameter of every route 1 MB long.
 */

const ROUTES = APP_ROUTES;

const RUNS_PER_ROUTE = 3;
const SEED = 8_2026;

let api: TestServer;
/** Who the authentication checks ask about; never a target of the generated requests. */
let checker: { user: any; token: string };
/** What generated requests may hit by id (an admin may block, delete or rename them). */
const victims = { users: [] as string[], groups: [] as string[], projects: [] as string[] };

beforeAll(async () => {
  api = await startTestServer();
  checker = await api.createUser();
  for (let i = 0; i < 2; i++) {
    victims.users.push(String((await api.createUser()).user.id));
    const group = await createGroup(api, { visibility: i === 0 ? 'public' : 'private' });
    victims.groups.push(String(group.id), encodeURIComponent(group.full_path));
    const project = await createProject(api, { visibility: i === 0 ? 'public' : 'private', group });
    victims.projects.push(String(project.id), encodeURIComponent(project.path_with_namespace));
  }
});
afterAll(() => api.close());

// ───────────────────────────── Generators ─────────────────────────────

const HOSTILE_TEXT = [
  '',
  ' ',
  'abc',
  '-1',
  '0',
  '1.5',
  '1e309',
  '-1e309',
  '2147483648',
  '99999999999999999999999',
  'true',
  'null',
  '0000-01-01',
  '+275760-09-13',
  '2024-02-30',
  '2024-02-29',
  '../..',
  '..%2F..',
  'a\u0000b',
  '\u0000',
  '\ud800',
  'x\udc00',
  'é😀',
  'x'.repeat(300),
  Array.from({ length: 9000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join(''),
];
const text = fc.oneof(fc.constantFrom(...HOSTILE_TEXT), fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 6 }));

const PARAMETER_NAMES = [
  'id',
  'name',
  'path',
  'description',
  'search',
  'username',
  'email',
  'password',
  'page',
  'per_page',
  'sort',
  'order_by',
  'visibility',
  'expires_at',
  'created_after',
  'access_level',
  'user_id',
  'parent_id',
  'namespace_id',
  'scopes',
  'value',
  'message',
  'emoji',
  'sudo',
  'private_token',
  'pagination',
  'admin',
  'skip_confirmation',
  // the administration areas (issue 10)
  'external_url',
  'title',
  'key',
  'can_push',
  'level',
  'notification_email',
  'color',
  'starts_at',
  'push_access_level',
  'allowed_to_push',
  'rsa_key_restriction',
  'external_authorization_service_timeout',
];
const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', '__proto__[sudo]', '__proto__[x]', 'constructor[prototype]', 'prototype[sudo]', 'sudo[__proto__]', 'scopes[]', 'a[b]'];
const key = fc.oneof(fc.constantFrom(...PARAMETER_NAMES), fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 6 }));

/** Percent-encoding that lets lone surrogates through as the invalid UTF-8 a hostile client sends. */
const encode = (value: string) => {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
};

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const wide = `[${Array(50_001).fill(0).join(',')}]`;
const jsonScalar = fc.oneof(
  fc.constantFrom('1e309', '-1e309', '2147483648', '-0', '1.5', 'true', 'false', 'null', '123456789012345678901234567890', '"\\ud800"', '"a\\u0000b"'),
  text.map((value) => JSON.stringify(value)),
);
const jsonValue = fc.oneof(
  { weight: 6, arbitrary: jsonScalar },
  { weight: 2, arbitrary: fc.array(jsonScalar, { maxLength: 4 }).map((items) => `[${items.join(',')}]`) },
  { weight: 2, arbitrary: fc.array(fc.tuple(key, jsonScalar), { maxLength: 3 }).map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`) },
  { weight: 1, arbitrary: fc.constantFrom(nested(33), nested(32), nested(200), wide) },
);
const jsonObject = fc.array(fc.tuple(key, jsonValue), { maxLength: 6 }).map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);
const pairs = fc.array(fc.tuple(key, text), { maxLength: 5 });

interface Body {
  readonly type?: string;
  readonly body?: string | FormData;
}
const body: fc.Arbitrary<Body> = fc.oneof(
  fc.constant({}),
  jsonObject.map((json) => ({ type: 'application/json', body: json })),
  fc.constantFrom('[1,2]', '"x"', 'null', '1e309', nested(40)).map((json) => ({ type: 'application/json', body: json })),
  pairs.map((entries) => ({ type: 'application/x-www-form-urlencoded', body: entries.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&') })),
  pairs.map((entries) => {
    const form = new FormData();
    for (const [k, v] of entries) form.append(k, v);
    return { body: form };
  }),
  fc.constantFrom<Body>(
    { type: 'application/json', body: '{"name":' },
    { type: 'application/json', body: '' },
    { type: 'multipart/form-data', body: 'x' },
    { type: 'multipart/form-data; boundary=abc', body: '--abc\r\nContent-Disposition: form-data; name="a"\r\n\r\nb' },
    { type: 'application/x-www-form-urlencoded', body: 'name=%E0%A4%A&path=%ZZ' },
    { type: 'application/x-www-form-urlencoded', body: 'a=%00' },
    { type: 'text/plain', body: 'hello' },
    { type: 'application/xml', body: '<a/>' },
  ),
);

const HOSTILE_SEGMENTS = ['abc', '0', '-1', '1.5', '1e309', '2147483648', '99999999999999999999', '%00', 'a%00b', '..%2F..', '%2e%2e', '..', 'a%2Fb', '%ED%A0%80', '%ZZ', '%', 'x'.repeat(300), '%E2%82%AC'];

/** A value for a path parameter: a victim of the route's area, or a hostile fragment. */
function segment(route: string, name: string): fc.Arbitrary<string> {
  const area = route.split('/')[3];
  const own =
    name === 'user_id' || area === 'users'
      ? victims.users
      : area === 'groups' && name === 'id'
        ? victims.groups
        : area === 'projects' && name === 'id'
          ? victims.projects
          : ['team', 'k'];
  return fc.oneof(fc.constantFrom(...own), fc.constantFrom(...HOSTILE_SEGMENTS));
}

// ───────────────────────────── Checks ─────────────────────────────

/** GitLab's error bodies: `{"message":…}`, `{"error":…}`, HandleNullBytes' text, or (API::Scim) SCIM's error form. */
function gitlabShaped(status: number, text: string): boolean {
  if (status === 400 && text === 'Bad Request') return true;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const { message, error, schemas, detail } = body as { message?: unknown; error?: unknown; schemas?: unknown; detail?: unknown };
  if (typeof error === 'string') return true;
  if (Array.isArray(schemas) && schemas.includes('urn:ietf:params:scim:api:messages:2.0:Error') && typeof detail === 'string') return true;
  if (typeof message === 'string') return true;
  return !!message && typeof message === 'object' && Object.values(message).every((value) => Array.isArray(value));
}

async function eventsOf(requestId: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from events where metadata->>'request_id' = ${requestId}`.execute(api.handle.db);
  return Number(rows[0]!.n);
}

let sent = 0;

describe.each(ROUTES)('$method $path', ({ method, path }) => {
  it('answers hostile requests, anonymous and as admin, without a 5xx, in GitLab bodies, with nothing appended when refused', async () => {
    const names = [...path.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]!);
    const request = fc.record({
      admin: fc.boolean(),
      segments: fc.tuple(...names.map((name) => segment(path, name))),
      query: pairs,
      rawQuery: fc.constantFrom('', 'x=%00', 'x=%ZZ', 'a[__proto__][sudo]=alice'),
      body: method === 'GET' ? fc.constant<Body>({}) : body,
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ admin, segments, query, rawQuery, body }) => {
        let i = 0;
        const target = path.replace(/:([A-Za-z_]+)(\{[^}]*\})?/g, () => segments[i++] as string);
        const search = [...query.map(([k, v]) => `${encode(k)}=${encode(v)}`), rawQuery].filter((part) => part !== '').join('&');
        const requestId = `hostile-${process.pid}-${++sent}`;
        const headers: Record<string, string> = { 'x-request-id': requestId };
        if (admin) headers['private-token'] = api.rootToken;
        if (body.type) headers['content-type'] = body.type;
        const response = await fetch(`${api.url}${target}${search ? `?${search}` : ''}`, {
          method,
          headers,
          ...(body.body === undefined ? {} : { body: body.body }),
        });
        const answer = await response.text();
        const described = `${method} ${target}?${search} ${admin ? 'as admin' : 'anonymously'} ${body.type ?? ''} → ${response.status} ${answer.slice(0, 300)}`;
        expect(response.status, described).toBeLessThan(500);
        if (response.status >= 400) {
          expect(gitlabShaped(response.status, answer), described).toBe(true);
          expect(await eventsOf(requestId), described).toBe(0);
        }
        expect(Object.prototype, described).not.toHaveProperty('sudo');
      }),
      { numRuns: RUNS_PER_ROUTE, seed: SEED, endOnFailure: true },
    );
    await expectAuthenticationIntact(api, checker);
  });
});

it('covers every registered route', () => {
  expect(ROUTES.length).toBeGreaterThan(40);
});
