import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Issue 22: an idle server does no database work at all. Its async workers, the sealer and
 * the delivery sender wait on LISTEN/NOTIFY (in-process wake-ups on the embedded database)
 * and poll only as a slow fallback: every FORGELOG_POLL_INTERVAL_MS (default 30 s) without
 * LISTEN, every 10 minutes with it.
 */

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Counts every statement the process sends to the handle's database from now until `stop()`. */
function countStatements(handle: DatabaseHandle): { stop(): string[] } {
  const sent: string[] = [];
  const record = (query: unknown) => sent.push(String(typeof query === 'string' ? query : (query as { text?: string } | undefined)?.text).replace(/\s+/g, ' ').slice(0, 100));
  if (handle.pglite) {
    const pglite = handle.pglite as unknown as Record<'query' | 'exec', (...args: unknown[]) => unknown>;
    const originals = { query: pglite.query, exec: pglite.exec };
    for (const name of ['query', 'exec'] as const) {
      pglite[name] = function (this: unknown, ...args: unknown[]) {
        record(args[0]);
        return originals[name].apply(this, args);
      };
    }
    return { stop: () => (Object.assign(pglite, originals), sent) };
  }
  // Every connection of the pool, open ones and those opened meanwhile (what the pool's
  // clients send goes through their own `query`, wrapped at connect by the statement names).
  const pool = handle.pool!;
  const wrapped: { client: { query: (...args: unknown[]) => unknown }; original: (...args: unknown[]) => unknown }[] = [];
  const wrap = (client: { query: (...args: unknown[]) => unknown }) => {
    const original = client.query;
    client.query = function (this: unknown, ...args: unknown[]) {
      record(args[0]);
      return original.apply(this, args);
    };
    wrapped.push({ client, original });
  };
  for (const client of (pool as unknown as { _clients: { query: (...args: unknown[]) => unknown }[] })._clients) wrap(client);
  const onConnect = (client: pg.PoolClient) => wrap(client as unknown as { query: (...args: unknown[]) => unknown });
  pool.on('connect', onConnect);
  return {
    stop: () => {
      pool.off('connect', onConnect);
      for (const { client, original } of wrapped) client.query = original;
      return sent;
    },
  };
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an idle server', () => {
  /** A write wakes the followers of its types and the sealer (at most once a second); then, for `quietMs`, what the server sends. */
  async function statementsAfterAWrite(api: TestServer, quietMs: number): Promise<string[]> {
    expect((await api.createUser()).user.id).toBeGreaterThan(0);
    await api.runtime.worker!.waitUntilCaughtUp();
    await settle(1_500);
    const counting = countStatements(api.handle);
    await settle(quietMs);
    return counting.stop();
  }

  it('sends no statement while nothing happens, after a write has woken every background loop', async () => {
    server = await startTestServer();
    expect(await statementsAfterAWrite(server, 3_000)).toEqual([]);
  }, 30_000);

  it('does not poll while it hears every append: a poll interval of 100 ms sends nothing either', async () => {
    // FORGELOG_POLL_INTERVAL_MS is the fallback for a process without LISTEN (runtime.ts, idleWait).
    server = await startTestServer({ pollIntervalMs: 100 });
    expect(await statementsAfterAWrite(server, 2_000)).toEqual([]);
  }, 30_000);

  it('still answers a wake-up: a write while idle reaches the async followers at once', async () => {
    server = await startTestServer();
    await settle(500);
    const { user } = await server.createUser();
    // DELETE /users/:id is asynchronous (a reactor removes what the user owned): it must not wait for the 30 s poll.
    expect((await server.del(`/users/${user.id}`)).status).toBe(204);
    await server.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 5_000 });
  }, 30_000);
});
