import type { ServerType } from '@hono/node-server';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/database/database.js';
import { exportEvents, type ExportedEvent } from '../../src/eventstore/export.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { listen, openRuntime, type Runtime } from '../../src/runtime.js';
import { freshTestStore, type TestStore } from '../support/database.js';
import { addMember, createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The feeds (activity and audit) are the log read through one mapping each: a log exported
 * from one database and appended, as exported, to an empty one (every projection then
 * rebuilt from position 0) answers every feed request byte for byte as the original did; so
 * does the original after every projection is rebuilt.
 */

const EXTERNAL_URL = 'http://forgelog.example';
const clock = { now: new Date('2024-05-01T09:00:00.000Z') };
const tick = () => (clock.now = new Date(clock.now.getTime() + 60_000));

let api: TestServer;
let store: TestStore | undefined;
let replica: { runtime: Runtime; server: ServerType; url: string } | undefined;

beforeAll(async () => {
  api = await startTestServer({ externalUrl: EXTERNAL_URL }, { now: () => clock.now });
  await settled(api);
});
afterAll(async () => {
  if (replica) {
    await new Promise((resolve) => replica!.server.close(resolve));
    await replica.runtime.close();
  }
  await store?.dispose();
  await api.close();
});

/** The log as `forgelog events export` writes it. */
async function exported(): Promise<ExportedEvent[]> {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  await exportEvents(api.handle.db, out);
  return lines.join('').trim().split('\n').map((line) => JSON.parse(line) as ExportedEvent);
}

/**
 * Appends the exported rows to an empty log, each of the original transactions as one
 * transaction, in the exported (gap-free) order, at their exported positions (an audit
 * event's id is its position: a log moved to another database keeps them).
 */
async function appendAsExported(handle: DatabaseHandle, events: readonly ExportedEvent[]) {
  const transactions = new Map<string, ExportedEvent[]>();
  for (const event of events) transactions.set(event.transaction_id, [...(transactions.get(event.transaction_id) ?? []), event]);
  for (const rows of transactions.values()) {
    await handle.db.transaction().execute(async (trx) => {
      for (const row of rows) {
        await sql`insert into events (global_position, stream_id, stream_version, event_id, event_type, schema_version, data, metadata,
            actor_id, project_id, group_id, target_type, target_id, occurred_at, hash)
          overriding system value
          values (${row.global_position}, ${row.stream_id}, ${row.stream_version}, ${row.event_id}, ${row.event_type}, ${row.schema_version},
            ${JSON.stringify(row.data)}::jsonb, ${JSON.stringify(row.metadata)}::jsonb, ${row.actor_id}, ${row.project_id}, ${row.group_id},
            ${row.target_type}, ${row.target_id}, ${row.occurred_at}::timestamptz, ${row.hash})`.execute(trx);
      }
    });
  }
}

describe('activity and audit feeds replayed from zero', () => {
  it('answer byte for byte as before', async () => {
    const alice = await api.createUser({ username: 'replay-alice', can_create_group: true });
    const bob = await api.createUser({ username: 'replay-bob' });
    tick();
    const group = await createGroup(api, { token: alice.token, visibility: 'internal' });
    tick();
    const site = await createProject(api, { token: alice.token, group, visibility: 'private' });
    const blog = await createProject(api, { token: alice.token, visibility: 'public' });
    tick();
    await addMember(api, 'projects', site.id, bob.user.id, 30);
    await addMember(api, 'groups', group.id, bob.user.id, 10);
    tick();
    expect((await api.post(`/projects/${blog.id}/access_requests`, {}, { token: bob.token })).status).toBe(201);
    expect((await api.put(`/projects/${blog.id}/access_requests/${bob.user.id}/approve`, {}, { token: alice.token })).status).toBe(201);
    tick();
    expect((await api.del(`/projects/${site.id}/members/${bob.user.id}`, { token: alice.token })).status).toBe(204);
    for (const password of ['replay-password-1', 'replay-password-2']) expect((await api.put(`/users/${bob.user.id}`, { password })).status).toBe(200);
    const doomed = await createProject(api, { token: alice.token, visibility: 'public' });
    expect((await api.del(`/projects/${doomed.id}`, { token: alice.token })).status).toBe(202);
    await eventually(async () => ((await api.events(`project-${doomed.id}`)).some((e) => e.type === 'ProjectDeleted') ? true : undefined));

    const requests: [path: string, token: string | null, query?: Record<string, string | number>][] = [
      ['/events', alice.token],
      ['/events', bob.token, { sort: 'asc' }],
      [`/users/${alice.user.id}/events`, api.rootToken, { target_type: 'project' }],
      [`/users/${alice.user.id}/events`, null],
      [`/users/${alice.user.id}/events`, bob.token, { per_page: 2, page: 2 }],
      [`/users/replay-bob/events`, api.rootToken, { action: 'joined' }],
      [`/users/${bob.user.id}/events`, null, { after: '2024-04-30', before: '2024-05-02' }],
      [`/projects/${site.id}/events`, alice.token],
      [`/projects/${blog.id}/events`, null, { action: 'joined' }],
      [`/projects/${blog.id}/events`, bob.token, { sort: 'asc', per_page: 1 }],
      ['/audit_events', api.rootToken],
      ['/audit_events', api.rootToken, { entity_type: 'Project', entity_id: blog.id }],
      ['/audit_events', api.rootToken, { entity_type: 'User', per_page: 1, page: 2 }],
      [`/groups/${group.id}/audit_events`, alice.token],
    ];
    const answer = async (base: string, [path, token, query]: (typeof requests)[number]) => {
      const url = new URL(`${base}/api/v4${path}`);
      for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, String(value));
      const res = await fetch(url, { headers: token ? { 'PRIVATE-TOKEN': token } : {} });
      const headers = ['x-total', 'x-total-pages', 'x-page', 'x-next-page', 'x-prev-page', 'link'].map((h) => `${h}: ${res.headers.get(h)}`);
      return `${res.status}\n${headers.join('\n')}\n${await res.text()}`;
    };
    const original: string[] = [];
    for (const request of requests) original.push(await answer(api.url, request));
    // Not empty answers compared with empty ones: each feed shows something.
    expect(original.filter((text) => !text.startsWith('200') || text.endsWith('\n[]'))).toEqual([]);

    // One record by its id, which must survive the move too.
    const [firstAudit] = (await api.get('/audit_events', { query: { per_page: 1 } })).body as { id: number }[];
    requests.push([`/audit_events/${firstAudit!.id}`, api.rootToken]);
    original.push(await answer(api.url, requests.at(-1)!));

    // Rebuilt in place, every projection from position 0: the same answers.
    await rebuildProjections(api.handle, PROJECTORS);
    const rebuilt: string[] = [];
    for (const request of requests) rebuilt.push(await answer(api.url, request));
    expect(rebuilt).toEqual(original);

    const log = await exported();
    store = await freshTestStore('replay');
    const handle = await store.open();
    await appendAsExported(handle, log);
    await rebuildProjections(handle, PROJECTORS);
    const config: Config = { ...loadConfig({}), port: 0, logLevel: 'silent', externalUrl: EXTERNAL_URL };
    const runtime = await openRuntime(config, { handle, logger: pino({ level: 'silent' }), migrate: false, workers: false, bootstrap: false, now: () => clock.now });
    const { server, port } = await listen(runtime, 0);
    replica = { runtime, server, url: `http://127.0.0.1:${port}` };

    const replayed: string[] = [];
    for (const request of requests) replayed.push(await answer(replica.url, request));
    expect(replayed).toEqual(original);
  });
});
