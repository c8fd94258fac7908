import { randomBytes } from 'node:crypto';
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import type { ServerType } from '@hono/node-server';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/database/database.js';
import { isConnectionError } from '../../src/database/pg-client.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { listen, openRuntime, type Runtime } from '../../src/runtime.js';
import { describeOnPostgres } from '../support/database.js';
import { withDatabase } from '../support/global-setup.js';
import { expectReplayEquivalence } from '../support/replay.js';

// Its phases each wait on a deadline of their own: the test as a whole needs more than the
// suite's default minute on a loaded machine.
vi.setConfig({ testTimeout: 300_000 });

/**
 * Database faults under write load (issue 8, items 8 and 9). The app reaches its own clone
 * of the test database through a TCP proxy in this process, so the test can make the
 * database unreachable — a restart as the application sees it: every connection dropped,
 * new ones refused — without restarting the machine's PostgreSQL, which other test runs
 * share. pg_terminate_backend on the clone's backends is the other fault.
 */

const CLIENTS = 8;
const ROOT_TOKEN = 'root-token-for-fault-tests';

describe('isConnectionError', () => {
  it('knows the errors of an unreachable database and no others', () => {
    const sqlState = (code: string) => Object.assign(new Error('x'), { code });
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300', 'ECONNREFUSED', 'ECONNRESET']) expect(isConnectionError(sqlState(code))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isConnectionError(new AggregateError([sqlState('ECONNREFUSED'), sqlState('ECONNREFUSED')]))).toBe(true);
    for (const code of ['23505', '40001', '22012', '0A000', '57014']) expect(isConnectionError(sqlState(code))).toBe(false);
    expect(isConnectionError(new Error('boom'))).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});

describeOnPostgres('a database that drops its connections under write load (PGlite has no connections to lose)', () => {
  let database: string;
  let proxy: Proxy;
  let handle: DatabaseHandle;
  let runtime: Runtime;
  let server: ServerType;
  let base: string;
  const admin = () => new pg.Client({ connectionString: withDatabase(process.env.DATABASE_URL!, 'postgres') });

  beforeAll(async () => {
    const url = process.env.DATABASE_URL!;
    database = `${inject('postgresTemplate')}_f${randomBytes(5).toString('hex')}`;
    const client = admin();
    await client.connect();
    await client.query(`create database "${database}" template "${inject('postgresTemplate')}"`);
    await client.end();
    const target = new URL(url);
    proxy = await startProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(withDatabase(url, database));
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    handle = await openDatabase({ databaseUrl: viaProxy.toString(), poolSize: 10 });
    const config: Config = { ...loadConfig({}), port: 0, logLevel: 'silent', rootToken: ROOT_TOKEN };
    runtime = await openRuntime(config, { handle, logger: pino({ level: 'silent' }), migrate: false });
    const listening = await listen(runtime, 0, '127.0.0.1');
    server = listening.server;
    base = `http://127.0.0.1:${listening.port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => (server as import('node:http').Server).close(() => resolve()));
    await runtime?.close();
    await proxy?.close();
    const client = admin();
    await client.connect();
    await client.query(`drop database if exists "${database}" with (force)`);
    await client.end();
  });

  async function call(method: string, path: string, token: string, body?: unknown) {
    const response = await fetch(`${base}${path.startsWith('/-/') ? '' : '/api/v4'}${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, body: text ? JSON.parse(text) : null };
  }

  /** Each client's own user and token (its status writes take the one-round-trip path). */
  async function makeClients() {
    const clients: { id: number; token: string }[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const username = `fault${i}`;
      const user = await call('POST', '/users', ROOT_TOKEN, { email: `${username}@example.com`, username, name: username, password: 'password123', skip_confirmation: true });
      expect(user.status).toBe(201);
      const token = await call('POST', `/users/${user.body.id}/personal_access_tokens`, ROOT_TOKEN, { name: 'load', scopes: ['api'] });
      expect(token.status).toBe(201);
      clients.push({ id: user.body.id, token: token.body.token });
    }
    return clients;
  }

  it('keeps serving: 503 while the database is away, no 500, every acknowledged write in the log and the read tables once', async () => {
    const clients = await makeClients();
    const answers: { kind: 'group' | 'status'; client: number; key: string; status: number; text: string; body: any }[] = [];
    const acknowledged = () => answers.filter((a) => a.status < 300).length;
    let stop = false;
    const load = clients.map(async (client, c) => {
      // Bounded in count; the phases below end it much sooner.
      for (let i = 0; i < 2_000 && !stop; i++) {
        const key = `load-${c}-${i}`;
        const answer =
          i % 2 === 0
            ? { kind: 'group' as const, ...(await call('POST', '/groups', client.token, { name: key, path: key })) }
            : { kind: 'status' as const, ...(await call('PUT', '/user/status', client.token, { emoji: 'coffee', message: key })) };
        answers.push({ ...answer, client: c, key });
        if (answer.status === 503) await pause(20);
      }
    });
    const waitFor = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000) => {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
        if (await condition()) return;
        await pause(20);
      }
      throw new Error(`gave up waiting for ${what}`);
    };

    try {
      // 1. Every backend of the database terminated mid-load (pooled, checked out, LISTEN, locks).
      await waitFor('writes before the fault', () => acknowledged() >= 40);
      const client = admin();
      await client.connect();
      const { rowCount } = await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database]);
      expect(rowCount).toBeGreaterThan(0);
      let before = acknowledged();
      await waitFor('writes after pg_terminate_backend', () => acknowledged() >= before + 40);

      // 2. The database unreachable (as during a restart): 503, readiness says so.
      proxy.down();
      const during = answers.length;
      await waitFor('503s during the outage', () => answers.slice(during).filter((a) => a.status === 503).length >= CLIENTS);
      const readiness = await call('GET', '/-/readiness', ROOT_TOKEN);
      expect(readiness.status).toBe(503);
      expect(readiness.body).toMatchObject({ status: 'failed', db_check: [{ status: 'failed' }] });
      const refused = await call('PUT', '/user/status', clients[0]!.token, { message: 'during the outage' });
      expect(refused).toMatchObject({ status: 503, body: { message: '503 Service Unavailable' } });

      // 3. Back: the same process recovers on its own.
      await proxy.up();
      before = acknowledged();
      await waitFor('writes after the database came back', () => acknowledged() >= before + 40);
      expect((await call('GET', '/-/readiness', ROOT_TOKEN)).status).toBe(200);
      await client.end();
    } finally {
      stop = true;
      await Promise.all(load);
    }

    // No 500s and nothing else unexpected: 2xx, or 503 while the database was away.
    const unexpected = answers.filter((a) => a.status >= 300 && a.status !== 503);
    expect(unexpected.map((a) => `${a.status} ${a.text}`)).toEqual([]);
    expect(answers.filter((a) => a.status === 503).every((a) => a.body?.message === '503 Service Unavailable')).toBe(true);

    // Every acknowledged write is in the log once, and in the read tables.
    const db = handle.db;
    const groups = answers.filter((a) => a.kind === 'group' && a.status === 201);
    const statuses = answers.filter((a) => a.kind === 'status' && a.status === 200);
    expect(groups.length).toBeGreaterThan(0);
    expect(statuses.length).toBeGreaterThan(0);
    const created = await db.selectFrom('events').select(['stream_id', 'data']).where('event_type', '=', 'GroupCreated').execute();
    const namespaces = await db.selectFrom('namespaces').select(['id', 'path']).where('kind', '=', 'group').execute();
    for (const group of groups) {
      expect(created.filter((e) => (e.data as { path?: string }).path === group.key).map((e) => e.stream_id)).toEqual([`group-${group.body.id}`]);
      expect(namespaces.filter((n) => n.path === group.key).map((n) => Number(n.id))).toEqual([group.body.id]);
    }
    const statusSet = await db.selectFrom('events').select(['stream_id', 'data']).where('event_type', '=', 'UserStatusSet').execute();
    for (const status of statuses) {
      expect(statusSet.filter((e) => (e.data as { message?: string }).message === status.key).map((e) => e.stream_id)).toEqual([`user-${clients[status.client]!.id}`]);
    }
    // Each user's status row is its stream's last status, and the read tables are what a replay gives.
    for (const client of clients) {
      const last = await db.selectFrom('events').select('data').where('stream_id', '=', `user-${client.id}`).where('event_type', '=', 'UserStatusSet').orderBy('stream_version', 'desc').limit(1).executeTakeFirst();
      const row = await db.selectFrom('users').select('status_message').where('id', '=', client.id).executeTakeFirstOrThrow();
      expect(row.status_message).toBe((last?.data as { message?: string } | undefined)?.message ?? null);
    }
    await expectReplayEquivalence(handle, PROJECTORS);

    // The workers resumed: every follower holds its lock again, the sealer seals the new log.
    await waitFor('the workers to hold their projections again', async () => (await runtime.worker!.lag()).every((f) => f.holder && f.lastError === null));
    await waitFor('the sealer to seal the log written during the faults', async () => {
      const { rows } = await sql<{ unsealed: string }>`
        select count(*) as unsealed from events e where not exists (
          select 1 from event_seals s where (e.transaction_id, e.global_position) between (s.first_transaction_id, s.first_position) and (s.last_transaction_id, s.last_position))`.execute(db);
      return Number(rows[0]!.unsealed) === 0;
      // The sealer seals below the gap-free horizon, which is the whole cluster's: another test
      // file's long transaction on the same server (a big push, a CREATE DATABASE) holds it back.
    }, 240_000);

    // The notifier listens again: a NOTIFY from another session wakes this process.
    const woken = new Promise<readonly string[] | undefined>((resolve) => {
      const off = runtime.notifier.onAppended((types) => {
        if (types?.includes('FaultTestPing')) {
          off();
          resolve(types);
        }
      });
    });
    const notifier = new pg.Client({ connectionString: withDatabase(process.env.DATABASE_URL!, database) });
    await notifier.connect();
    await waitFor('the LISTEN connection to be back', async () => {
      await notifier.query(`select pg_notify('forgelog_events', 'FaultTestPing')`);
      return Promise.race([woken.then(() => true), pause(100).then(() => false)]);
    });
    await notifier.end();
  });
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Proxy {
  port: number;
  /** Drops every connection and refuses new ones. */
  down(): void;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy to PostgreSQL that can make it unreachable, as a restart does. */
async function startProxy(host: string, port: number): Promise<Proxy> {
  const sockets = new Set<Socket>();
  let server: Server;
  const open = (listenPort: number) =>
    new Promise<number>((resolve, reject) => {
      server = createServer((incoming) => {
        const outgoing = new Socket();
        sockets.add(incoming).add(outgoing);
        const drop = () => {
          incoming.destroy();
          outgoing.destroy();
          sockets.delete(incoming);
          sockets.delete(outgoing);
        };
        incoming.on('error', drop).on('close', drop);
        outgoing.on('error', drop).on('close', drop);
        outgoing.connect(port, host, () => incoming.pipe(outgoing).pipe(incoming));
      });
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });
  const proxyPort = await open(0);
  const down = () => {
    server.close();
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  return {
    port: proxyPort,
    down,
    async up() {
      await open(proxyPort);
    },
    async close() {
      down();
    },
  };
}
