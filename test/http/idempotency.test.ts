import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { addMember, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type ApiResponse, type TestServer } from '../support/server.js';

// Idempotent writes (a forgelog extension, docs/architecture.md "Idempotent writes"):
// `Idempotency-Key` on POST, PUT, PATCH and DELETE.

let api: TestServer;
/** The command clock, moved by the expiry tests. */
let clock = Date.parse('2026-06-01T10:00:00Z');
beforeAll(async () => {
  api = await startTestServer({}, { now: () => new Date(clock) });
  await settled(api);
});
afterAll(() => api.close());

const REUSED = { message: 'Idempotency-Key was already used with a different request' };
let keys = 0;
const newKey = () => `key-${++keys}-${process.pid}`;
const keyed = (key: string, extra: Record<string, string> = {}) => ({ headers: { 'Idempotency-Key': key, ...extra } });

const eventCount = async () => Number((await sql<{ n: string }>`select count(*) as n from events`.execute(api.handle.db)).rows[0]!.n);
const environments = async (projectId: number) =>
  (await sql<{ name: string }>`select name from environments where project_id = ${projectId} order by id`.execute(api.handle.db)).rows.map((r) => r.name);
const createEnvironment = (projectId: number, name: string, key: string, token?: string | null) =>
  api.post(`/projects/${projectId}/environments`, { name }, { ...keyed(key), ...(token === undefined ? {} : { token }) });
const replayed = (res: ApiResponse) => res.headers.get('idempotent-replayed');
/** The digest an earlier forgelog stored: SHA-256 over method, path, query, Sudo, media type and the JSON body, unkeyed. */
const plainDigest = (path: string, body: object) =>
  createHash('sha256').update(JSON.stringify(['POST', path, [], null, 'application/json'])).update(JSON.stringify(body)).digest('hex');

describe('POST with an Idempotency-Key', () => {
  it('answers a retry with the first answer — status, body, headers — and appends nothing', async () => {
    const project = await createProject(api);
    const key = newKey();
    const first = await createEnvironment(project.id, 'production', key);
    expect(first.status).toBe(201);
    expect(replayed(first)).toBeNull();
    const before = await eventCount();

    const retry = await createEnvironment(project.id, 'production', key);
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(first.text);
    expect(replayed(retry)).toBe('true');
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
    // The exchange's own headers are this exchange's.
    expect(retry.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(retry.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
    expect(await eventCount()).toBe(before);
    expect(await environments(project.id)).toEqual(['production']);
  });

  it('stores a refusal too: the retry gets the 404 even once the caller may write', async () => {
    const { user, token } = await api.createUser();
    const project = await createProject(api);
    const key = newKey();
    expect(await createEnvironment(project.id, 'staging', key, token)).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    await addMember(api, 'projects', project.id, user.id, 40);
    const retry = await createEnvironment(project.id, 'staging', key, token);
    expect(retry).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(replayed(retry)).toBe('true');
    expect(await environments(project.id)).toEqual([]);
    // A new key is a new request.
    expect((await createEnvironment(project.id, 'staging', newKey(), token)).status).toBe(201);
  });

  it('is 422 for the same key with another body, path, method or Sudo, and appends nothing', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const { user } = await api.createUser();
    const key = newKey();
    expect((await createEnvironment(project.id, 'review', key)).status).toBe(201);
    const before = await eventCount();
    const differing = [
      await createEnvironment(project.id, 'review-2', key),
      await createEnvironment(other.id, 'review', key),
      await api.post(`/projects/${project.id}/environments`, { name: 'review' }, keyed(key, { Sudo: String(user.id) })),
      await api.post(`/projects/${project.id}/environments`, { name: 'review' }, { ...keyed(key), query: { sudo: user.id } }),
      await api.put(`/projects/${project.id}/environments`, { name: 'review' }, keyed(key)),
    ];
    for (const res of differing) {
      expect(res.status).toBe(422);
      expect(res.body).toEqual(REUSED);
      expect(replayed(res)).toBeNull();
    }
    expect(await eventCount()).toBe(before);
    expect(await environments(project.id)).toEqual(['review']);
    expect(await environments(other.id)).toEqual([]);
  });

  it('executes once for 8 concurrent requests with one key; the others answer the same', async () => {
    const project = await createProject(api);
    const key = newKey();
    const before = await eventCount();
    const answers = await Promise.all(Array.from({ length: 8 }, () => createEnvironment(project.id, 'canary', key)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => replayed(a) === null)).toHaveLength(1);
    expect(await environments(project.id)).toEqual(['canary']);
    expect(await eventCount()).toBe(before + 1);
  });

  it('runs side by side with writes without a key', async () => {
    const project = await createProject(api);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0 ? createEnvironment(project.id, `keyed-${i}`, newKey()) : api.post(`/projects/${project.id}/environments`, { name: `plain-${i}` }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(12);
    expect((await environments(project.id)).sort()).toEqual(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? `keyed-${i}` : `plain-${i}`)).sort());
  });

  it('covers a write of several commands in one transaction (POST /groups: the group and its owner)', async () => {
    const key = newKey();
    const path = `idem-group-${process.pid}`;
    const first = await api.post('/groups', { name: path, path }, keyed(key));
    expect(first.status).toBe(201);
    const before = await eventCount();
    const retry = await api.post('/groups', { name: path, path }, keyed(key));
    expect(retry).toMatchObject({ status: 201, body: first.body });
    expect(replayed(retry)).toBe('true');
    expect(await eventCount()).toBe(before);
    // Without the key the same request runs, and is refused as GitLab refuses a taken path.
    expect((await api.post('/groups', { name: path, path })).status).toBe(400);
  });

  it('replays a DELETE: the retry is the 204, not a 404', async () => {
    const project = await createProject(api);
    const created = await createEnvironment(project.id, 'gone', newKey());
    await api.post(`/projects/${project.id}/environments/${created.body.id}/stop`);
    const key = newKey();
    const first = await api.del(`/projects/${project.id}/environments/${created.body.id}`, keyed(key));
    expect(first.status).toBe(204);
    const retry = await api.del(`/projects/${project.id}/environments/${created.body.id}`, keyed(key));
    expect(retry.status).toBe(204);
    expect(retry.text).toBe('');
    expect(replayed(retry)).toBe('true');
    expect((await api.del(`/projects/${project.id}/environments/${created.body.id}`)).status).toBe(404);
  });

  it('keeps a new token replayable without storing it in clear', async () => {
    const { user } = await api.createUser();
    const key = newKey();
    const body = { name: 'ci', scopes: ['api'] };
    const first = await api.post(`/users/${user.id}/personal_access_tokens`, body, keyed(key));
    expect(first.status).toBe(201);
    expect(first.body.token).toEqual(expect.any(String));
    const retry = await api.post(`/users/${user.id}/personal_access_tokens`, body, keyed(key));
    expect(retry.body).toEqual(first.body);
    expect(replayed(retry)).toBe('true');
    const { rows } = await sql<{ body: string }>`select body from idempotency_keys where key = ${key}`.execute(api.handle.db);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.body).toMatch(/^v1\./);
    expect(rows[0]!.body).not.toContain(first.body.token);
    // The replayed token is the one stored: it authenticates.
    expect((await api.get('/user', { token: retry.body.token })).body.id).toBe(user.id);
  });

  it('keeps no plain digest of a request: a password in its body cannot be tested against the table', async () => {
    const key = newKey();
    const body = { email: `idem-${process.pid}@example.com`, username: `idem-${process.pid}`, name: 'Idem', password: 'correct horse 7' };
    expect((await api.post('/users', body, keyed(key))).status).toBe(201);
    expect(replayed(await api.post('/users', body, keyed(key)))).toBe('true');
    const { rows } = await sql<{ request_digest: string }>`select request_digest from idempotency_keys where key = ${key}`.execute(api.handle.db);
    // SHA-256 over the request as sent: whoever reads the table could test password guesses against it at SHA-256's speed.
    expect(rows[0]!.request_digest).not.toContain(plainDigest('/api/v4/users', body));
    expect(rows[0]!.request_digest).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  });

  it('replays an answer stored before digests were keyed (a plain SHA-256 digest, at most a TTL old)', async () => {
    const project = await createProject(api);
    const key = newKey();
    const first = await createEnvironment(project.id, 'legacy', key);
    expect(first.status).toBe(201);
    const path = `/api/v4/projects/${project.id}/environments`;
    await sql`update idempotency_keys set request_digest = ${plainDigest(path, { name: 'legacy' })} where key = ${key}`.execute(api.handle.db);
    const retry = await createEnvironment(project.id, 'legacy', key);
    expect(retry).toMatchObject({ status: 201, text: first.text });
    expect(replayed(retry)).toBe('true');
    expect(await createEnvironment(project.id, 'legacy-2', key)).toMatchObject({ status: 422, body: REUSED });
    expect(await environments(project.id)).toEqual(['legacy']);
  });

  it('tells requests apart by their parameters in form and multipart bodies too', async () => {
    const project = await createProject(api);
    const path = `/projects/${project.id}/environments`;
    const formKey = newKey();
    expect((await api.post(path, undefined, { form: { name: 'form' }, ...keyed(formKey) })).status).toBe(201);
    expect(replayed(await api.post(path, undefined, { form: { name: 'form' }, ...keyed(formKey) }))).toBe('true');
    expect((await api.post(path, undefined, { form: { name: 'other' }, ...keyed(formKey) })).status).toBe(422);
    // A multipart body's boundary differs at every send: its fields make the digest.
    const multipart = (name: string, key: string) => {
      const form = new FormData();
      form.set('name', name);
      return fetch(`${api.apiUrl}${path}`, { method: 'POST', body: form, headers: { 'PRIVATE-TOKEN': api.rootToken, 'Idempotency-Key': key } });
    };
    const multipartKey = newKey();
    expect((await multipart('multipart', multipartKey)).status).toBe(201);
    const again = await multipart('multipart', multipartKey);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await multipart('multipart-2', multipartKey)).status).toBe(422);
    expect(await environments(project.id)).toEqual(['form', 'multipart']);
  });

  it('refuses a malformed key with 400 before running the request', async () => {
    const project = await createProject(api);
    const res = await api.post(`/projects/${project.id}/environments`, { name: 'x' }, keyed('x'.repeat(256)));
    expect(res).toMatchObject({ status: 400, body: { message: '400 Bad request - Idempotency-Key must be 1 to 255 visible ASCII characters' } });
    expect(await environments(project.id)).toEqual([]);
  });
});

describe('GET with an Idempotency-Key', () => {
  it('ignores it', async () => {
    const project = await createProject(api);
    const key = newKey();
    const first = await api.get(`/projects/${project.id}/environments`, keyed(key));
    expect(first).toMatchObject({ status: 200, body: [] });
    await createEnvironment(project.id, 'listed', newKey());
    const second = await api.get(`/projects/${project.id}/environments`, keyed(key));
    expect(second.body.map((e: { name: string }) => e.name)).toEqual(['listed']);
    expect(replayed(second)).toBeNull();
    expect(Number((await sql<{ n: string }>`select count(*) as n from idempotency_keys where key = ${key}`.execute(api.handle.db)).rows[0]!.n)).toBe(0);
  });
});

describe('scope: a key belongs to the token that sent it', () => {
  it("runs another caller's request with the same key, and ignores the key of an anonymous one", async () => {
    const a = await api.createUser();
    const b = await api.createUser();
    const project = await createProject(api);
    await addMember(api, 'projects', project.id, a.user.id, 40);
    await addMember(api, 'projects', project.id, b.user.id, 40);
    const key = newKey();
    expect((await createEnvironment(project.id, 'a', key, a.token)).status).toBe(201);
    // Same key, same request, another caller: executed (the name is taken), not replayed.
    const other = await createEnvironment(project.id, 'a', key, b.token);
    expect(other).toMatchObject({ status: 400, body: { message: { name: ['has already been taken'] } } });
    expect(replayed(other)).toBeNull();
    // b's own answer is stored under b's token.
    expect(replayed(await createEnvironment(project.id, 'a', key, b.token))).toBe('true');

    for (let i = 0; i < 2; i++) {
      const anonymous = await createEnvironment(project.id, 'anon', key, null);
      expect(anonymous).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
      expect(replayed(anonymous)).toBeNull();
    }
  });

  it('replays only to a token that still authenticates: a blocked user gets 403, not the answer', async () => {
    const { user, token } = await api.createUser();
    const project = await createProject(api);
    await addMember(api, 'projects', project.id, user.id, 40);
    const key = newKey();
    expect((await createEnvironment(project.id, 'blocked', key, token)).status).toBe(201);
    expect((await api.post(`/users/${user.id}/block`)).status).toBe(201);
    const retry = await createEnvironment(project.id, 'blocked', key, token);
    expect(retry).toMatchObject({ status: 403, body: { message: '403 Forbidden - Your account has been blocked.' } });
    expect(replayed(retry)).toBeNull();
    expect((await api.post(`/users/${user.id}/unblock`)).status).toBe(201);
    expect(replayed(await createEnvironment(project.id, 'blocked', key, token))).toBe('true');
  });

  it('does not store a 401: a bad token is no caller', async () => {
    const project = await createProject(api);
    const key = newKey();
    expect((await createEnvironment(project.id, 'x', key, 'not-a-token')).status).toBe(401);
    expect(Number((await sql<{ n: string }>`select count(*) as n from idempotency_keys where key = ${key}`.execute(api.handle.db)).rows[0]!.n)).toBe(0);
  });
});

describe('expiry (FORGELOG_IDEMPOTENCY_TTL_HOURS, 24 by default)', () => {
  it('forgets a key after 24 hours by the command clock, and prunes expired answers', async () => {
    const project = await createProject(api);
    const stale = newKey();
    expect((await createEnvironment(project.id, 'stale', stale)).status).toBe(201);
    const key = newKey();
    expect((await createEnvironment(project.id, 'expiring', key)).status).toBe(201);
    clock += 23 * 3_600_000;
    expect(replayed(await createEnvironment(project.id, 'expiring', key))).toBe('true');
    clock += 2 * 3_600_000;
    // Executed again: the name is taken now.
    const again = await createEnvironment(project.id, 'expiring', key);
    expect(again).toMatchObject({ status: 400, body: { message: { name: ['has already been taken'] } } });
    expect(replayed(again)).toBeNull();
    // The other key's answer (expired an hour ago) was pruned by that write.
    expect((await sql`select key from idempotency_keys where key = ${stale}`.execute(api.handle.db)).rows).toEqual([]);
    expect(await environments(project.id)).toEqual(['stale', 'expiring']);
  });

  it('reads FORGELOG_IDEMPOTENCY_TTL_HOURS as a whole number of hours, at least 1', () => {
    expect(loadConfig({}).idempotencyTtlHours).toBe(24);
    expect(loadConfig({ FORGELOG_IDEMPOTENCY_TTL_HOURS: '72' }).idempotencyTtlHours).toBe(72);
    for (const bad of ['0', '1.5', 'day', '']) expect(() => loadConfig({ FORGELOG_IDEMPOTENCY_TTL_HOURS: bad })).toThrow(/^FORGELOG_IDEMPOTENCY_TTL_HOURS must be a whole number of hours, at least 1/);
  });

  it('keeps answers for FORGELOG_IDEMPOTENCY_TTL_HOURS hours', async () => {
    const config = api.runtime.config as { idempotencyTtlHours: number };
    config.idempotencyTtlHours = 1;
    try {
      const project = await createProject(api);
      const key = newKey();
      const create = () => api.post(`/projects/${project.id}/environments`, { name: 'short' }, keyed(key));
      expect((await create()).status).toBe(201);
      clock += 59 * 60_000;
      expect(replayed(await create())).toBe('true');
      clock += 2 * 60_000;
      expect(await create()).toMatchObject({ status: 400 });
    } finally {
      config.idempotencyTtlHours = 24;
    }
  });
});
