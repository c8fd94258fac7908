/**
 * 2. Writes (bench/README.md): the bare BEGIN/INSERT/COMMIT route and PUT /api/v4/user/status,
 * interleaved; connection i writes as user i, so writers never share a stream. Target: full
 * >= 50% of bare.
 */
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { tokenDigest } from '../src/security/secrets.js';
import { userStreamId } from '../src/domain/users.js';
import { eventHash } from '../src/eventstore/hash.js';
import { GENESIS_HASH } from '../src/eventstore/store.js';
import type { BenchApp } from './harness/app.js';
import type { LoadGenerator } from './harness/load-generator.js';
import { log } from './harness/meters.js';
import { closeServer, compareScenarios, countEvents, listenLocal, type HttpFigure, type Scenario } from './harness/scenarios.js';
import { SLICE_SECONDS, WHATIF } from './harness/settings.js';
import { httpRow, ratio, type Row } from './harness/table.js';
import type { BenchUser } from './harness/users.js';

export interface WriteFigures {
  bare: HttpFigure;
  userStatus: HttpFigure;
  lean?: HttpFigure;
}

export async function measureWrites(gen: LoadGenerator, app: BenchApp, users: readonly BenchUser[]): Promise<WriteFigures> {
  log(`writes (interleaved slices of ${SLICE_SECONDS} s)…`);
  // The bare route's table.
  await app.barePool.query('create table bench_scratch (id bigint generated always as identity primary key, user_id integer not null, payload jsonb not null, created_at timestamptz not null default now())');
  // A fresh message per request: an unchanged status appends nothing (GitLab semantics).
  const statusBody = JSON.stringify({ emoji: 'coffee', message: 'benchmarking <forgelog> [<id>]' });
  const json = { 'content-type': 'application/json' };
  const bareWrite = await listenLocal(bareWriteApp(app.barePool).fetch);
  const leanWrite = WHATIF ? await listenLocal(leanWriteApp(app.barePool).fetch) : undefined;
  const scenarios: Scenario[] = [
    {
      name: 'bare BEGIN/INSERT/COMMIT',
      job: { url: `http://127.0.0.1:${bareWrite.port}`, idReplacement: true, requests: users.map((u) => ({ method: 'PUT', path: `/users/${u.id}/status`, headers: json, body: statusBody })) },
      traffic: bareWrite.traffic,
      pool: app.barePool,
    },
    {
      name: 'PUT /api/v4/user/status',
      job: { url: app.base, idReplacement: true, requests: users.map((u) => ({ method: 'PUT', path: '/api/v4/user/status', headers: { ...json, 'PRIVATE-TOKEN': u.token }, body: statusBody })) },
      traffic: app.traffic,
      pool: app.handle.pool!,
      counter: app.statements,
      countEvents: () => countEvents(app.handle.db, 'UserStatusSet'),
    },
  ];
  if (leanWrite) {
    scenarios.push({
      name: 'what-if: same SQL, 6 stmts, 1 checkout',
      job: { url: `http://127.0.0.1:${leanWrite.port}`, idReplacement: true, requests: users.map((u) => ({ method: 'PUT', path: '/user/status', headers: { ...json, 'PRIVATE-TOKEN': u.token }, body: statusBody })) },
      traffic: leanWrite.traffic,
      pool: app.barePool,
      countEvents: () => countEvents(app.handle.db, 'UserStatusSet'),
    });
  }
  const [bare, userStatus, lean] = await compareScenarios(gen, scenarios);
  await closeServer(bareWrite.server);
  if (leanWrite) await closeServer(leanWrite.server);
  return { bare: bare!, userStatus: userStatus!, ...(lean ? { lean } : {}) };
}

/** Bare hono route: BEGIN; INSERT one row into a scratch table; COMMIT, on its own pool. */
function bareWriteApp(barePool: pg.Pool) {
  return new Hono().put('/users/:id/status', async (c) => {
    const body = await c.req.json<{ emoji?: string; message?: string }>();
    const client = await barePool.connect();
    try {
      await client.query('begin');
      await client.query('insert into bench_scratch (user_id, payload) values ($1, $2)', [Number(c.req.param('id')), JSON.stringify(body)]);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    return c.json({ emoji: body.emoji ?? '', message: body.message ?? '' });
  });
}

/**
 * What-if (BENCH_WHATIF=1), not the app: the same write with the app's own SQL shapes — token
 * and user in one joined query, the stream head, the events insert (trigger and indexes
 * included), the users projection update returning the row — on ONE checkout, 6 statements.
 * It prices the round trips and checkouts of PUT /user/status apart from the SQL it runs.
 */
function leanWriteApp(barePool: pg.Pool) {
  return new Hono().put('/user/status', async (c) => {
    const token = c.req.header('private-token') ?? '';
    const body = await c.req.json<{ emoji?: string; message?: string }>();
    const client = await barePool.connect();
    try {
      const auth = await client.query(
        'select u.id, u.username, u.state, t.id as token_id, t.scopes from personal_access_tokens t join users u on u.id = t.user_id where t.token_digest = $1 and not t.revoked',
        [tokenDigest(token)],
      );
      const user = auth.rows[0] as { id: number; username: string; token_id: number } | undefined;
      if (!user) return c.json({ message: '401 Unauthorized' }, 401);
      await client.query('begin');
      const streamId = userStreamId(user.id);
      const head = await client.query<{ stream_version: number; hash: string }>(
        'select stream_version, hash from events where stream_id = $1 order by stream_version desc limit 1',
        [streamId],
      );
      const version = (head.rows[0]?.stream_version ?? 0) + 1;
      const data = { id: user.id, emoji: body.emoji ?? 'speech_balloon', message: body.message ?? null, message_html: body.message ?? '' };
      const metadata = { actor_id: user.id, actor_username: user.username, token_id: user.token_id, request_id: randomUUID() };
      const occurredAt = new Date();
      const eventId = uuidv7();
      const hash = eventHash(head.rows[0]?.hash ?? GENESIS_HASH, { streamId, streamVersion: version, eventId, type: 'UserStatusSet', schemaVersion: 1, data, metadata, occurredAt });
      await client.query(
        `insert into events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata, actor_id, target_type, target_id, occurred_at, hash)
         values ($1, $2, $3, 'UserStatusSet', 1, $4, $5, $6, 'User', $6, $7, $8)`,
        [streamId, version, eventId, JSON.stringify(data), JSON.stringify(metadata), user.id, occurredAt.toISOString(), hash],
      );
      const row = await client.query(
        'update users set status_emoji = $2, status_message = $3, status_message_html = $4, updated_at = $5, stream_version = $6 where id = $1 and stream_version < $6 returning *',
        [user.id, data.emoji, data.message, data.message_html, occurredAt.toISOString(), version],
      );
      await client.query('commit');
      const updated = row.rows[0] as { status_emoji: string; status_message: string; status_message_html: string } | undefined;
      return c.json({ emoji: updated?.status_emoji ?? null, message: updated?.status_message ?? null, message_html: updated?.status_message_html ?? '' });
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  });
}

export function writeRows(writes: WriteFigures): Row[] {
  return [
    '2. Writes — requests/s (connection i writes as user i: writers never share a stream)',
    httpRow(writes.bare, undefined, ''),
    httpRow(writes.userStatus, writes.bare, '>= 50%', [`${writes.userStatus.eventsPerRequest} events/req`, `retries/req ${writes.userStatus.retriesPerRequest}`]),
    ...(writes.lean ? [httpRow(writes.lean, writes.bare, '', [`${writes.lean.eventsPerRequest} events/req`, 'not the app: BENCH_WHATIF'])] : []),
  ];
}

export const writesJson = (writes: WriteFigures) => ({
  bare: writes.bare,
  userStatus: { ...writes.userStatus, ratioToBare: ratio(writes.userStatus.rps, writes.bare.rps) },
  ...(writes.lean ? { whatIfLean: { ...writes.lean, ratioToBare: ratio(writes.lean.rps, writes.bare.rps) } } : {}),
});
