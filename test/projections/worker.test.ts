import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { ADVISORY_LOCK_CLASS } from '../../src/database/advisory-lock.js';
import { ProjectionWorker, type WorkerOptions } from '../../src/worker/runner.js';
import { onPostgres, openTestDatabase } from '../support/database.js';
import {
  commandContext,
  count,
  counterProjector,
  createCounterTable,
  createDeliveryTable,
  deliveries,
  deliveryProjector,
  eventsInLog,
  ignore,
  rowsOf,
  sleep,
} from './fixtures.js';
import type { CommandContext } from '../../src/commands/kernel/context.js';
import type { Reactor } from '../../src/commands/kernel/reactor.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase({ poolSize: 12 });
  await createCounterTable(handle.db);
  await createDeliveryTable(handle.db);
});
afterAll(() => handle.close());

/** A worker that is stopped whatever happens (a running one keeps a pool connection). */
async function withWorker<T, C = unknown>(options: WorkerOptions<C>, fn: (worker: ProjectionWorker<C>) => Promise<T>): Promise<T> {
  const worker = new ProjectionWorker(handle, options);
  try {
    return await fn(worker);
  } finally {
    await worker.stop();
  }
}

const checkpointRow = async (name: string) =>
  (await sql<{ version: number; transaction_id: string; global_position: string }>`
    select version, transaction_id::text as transaction_id, global_position from projection_checkpoints where name = ${name}`.execute(handle.db)).rows[0];

describe('ProjectionWorker', () => {
  it('follows the log on wake-ups and moves its checkpoint to the head', async () => {
    const ctx = commandContext(handle);
    // Polling once a minute: only the notifier's wake-ups can make it in time.
    const worker = new ProjectionWorker(handle, { projectors: [counterProjector()], notifier: ctx.notifier, pollIntervalMs: 60_000 });
    worker.start();
    try {
      // A new projection is rebuilt first; append once the worker follows the log.
      for (let i = 0; i < 200 && (await worker.lag())[0]?.state !== 'following'; i++) await sleep(10);
      await count(ctx, 'a', 1);
      await count(ctx, 'a', 2);
      await ignore(ctx, 'a');
      await count(ctx, 'b', 10);
      await worker.waitUntilCaughtUp({ timeoutMs: 20_000 });

      expect(await rowsOf(handle.db, 'test_counts')).toEqual([
        { stream_id: 'a', events: 2, total: '3', last_version: 2 },
        { stream_id: 'b', events: 1, total: '10', last_version: 1 },
      ]);
      const log = await eventsInLog(handle.db);
      const head = (await sql<{ global_position: string }>`select max(global_position) as global_position from events`.execute(handle.db)).rows[0]!;
      expect(await checkpointRow('counts')).toMatchObject({ version: 1, global_position: head.global_position });
      expect(log).toHaveLength(4);
      const [lag] = await worker.lag();
      expect(lag).toMatchObject({ name: 'counts', version: 1, eventsBehind: 0, state: 'following', holder: true, lastError: null });
    } finally {
      await worker.stop();
    }
  });

  // A transaction elsewhere, older than the append and still running, holds the visible log
  // below it; its commit appends nothing, so nothing wakes the worker: it must look again soon.
  it.runIf(onPostgres)('comes back soon for events a running transaction elsewhere holds back', async () => {
    const ctx = commandContext(handle);
    const worker = new ProjectionWorker(handle, { projectors: [counterProjector()], notifier: ctx.notifier, pollIntervalMs: 60_000 });
    worker.start();
    const holder = await handle.pool!.connect();
    try {
      for (let i = 0; i < 200 && (await worker.lag())[0]?.state !== 'following'; i++) await sleep(10);
      await holder.query('begin');
      await holder.query('select pg_current_xact_id()');
      await count(ctx, 'held', 7);
      await sleep(300);
      const held = async () => (await rowsOf(handle.db, 'test_counts')).filter((row) => row.stream_id === 'held');
      expect(await held()).toEqual([]);
      await holder.query('commit');
      for (let i = 0; i < 500 && (await held()).length === 0; i++) await sleep(20);
      expect(await held()).toEqual([{ stream_id: 'held', events: 1, total: '7', last_version: 1 }]);
    } finally {
      await holder.query('rollback').catch(() => {});
      holder.release();
      await worker.stop();
    }
  });

  it('changes nothing when the same events are applied again (one by one and in batches)', async () => {
    const before = await rowsOf(handle.db, 'test_counts');
    for (const projector of [counterProjector(), counterProjector({ batch: false })]) {
      await sql`update projection_checkpoints set transaction_id = '0', global_position = 0 where name = 'counts'`.execute(handle.db);
      // The log's Counted events, read again (the Ignored one is not the projection's type: not read at all).
      expect(await withWorker({ projectors: [projector], batchSize: 2 }, (w) => w.catchUp())).toBe((await eventsInLog(handle.db)).filter((e) => e.event_type === 'Counted').length);
      expect(await rowsOf(handle.db, 'test_counts')).toEqual(before);
    }
  });

  it('resumes from its checkpoint after stop and start: every event delivered exactly once, in stream order', async () => {
    const ctx = commandContext(handle);
    await withWorker({ projectors: [deliveryProjector()], notifier: ctx.notifier, pollIntervalMs: 20, batchSize: 3 }, async (first) => {
      first.start();
      for (let i = 0; i < 5; i++) await count(ctx, `s${i % 2}`, i);
      await first.waitUntilCaughtUp();
    });

    for (let i = 0; i < 7; i++) await count(ctx, `s${i % 3}`, i);
    await withWorker({ projectors: [deliveryProjector()], batchSize: 3 }, (second) => second.catchUp());

    const delivered = await deliveries(handle.db);
    const log = await eventsInLog(handle.db);
    expect(delivered.map((d) => d.event_id).sort()).toEqual(log.map((e) => e.event_id).sort());
    for (const stream of new Set(log.map((e) => e.stream_id))) {
      const versions = delivered.filter((d) => d.stream_id === stream).map((d) => d.stream_version);
      expect(versions).toEqual([...versions].sort((x, y) => x - y));
    }
  });

  it('rebuilds a projection whose version was bumped before following the log', async () => {
    const ctx = commandContext(handle);
    await count(ctx, 'c', 5);
    await withWorker({ projectors: [counterProjector()] }, (v1) => v1.catchUp());
    const totals = async () =>
      (await rowsOf(handle.db, 'test_counts')).filter((r) => ['a', 'b', 'c'].includes(r.stream_id as string)).map((r) => [r.stream_id, r.total]);
    expect(await totals()).toEqual([['a', '3'], ['b', '10'], ['c', '5']]);

    // v2 counts every amount twice: only a rebuild from position 0 gets the old rows right.
    await withWorker({ projectors: [counterProjector({ version: 2, factor: 2 })] }, async (v2) => {
      await v2.catchUp();
      expect(await totals()).toEqual([['a', '6'], ['b', '20'], ['c', '10']]);
      expect(await checkpointRow('counts')).toMatchObject({ version: 2 });
      await count(ctx, 'c', 1);
      await v2.catchUp();
    });
    expect(await totals()).toEqual([['a', '6'], ['b', '20'], ['c', '12']]);

    // Old code meeting a newer version stands by instead of rebuilding it back…
    await withWorker({ projectors: [counterProjector()] }, async (stale) => {
      expect(await stale.catchUp()).toBe(0);
      expect((await stale.lag())[0]).toMatchObject({ state: 'standby', version: 2, holder: false });
      expect((await stale.lag())[0]!.lastError).toMatch(/version 2/);
    });
    expect(await checkpointRow('counts')).toMatchObject({ version: 2 });

    // …and, running first, it lets go of the projection so the next version takes it (rolling deploy).
    await withWorker({ projectors: [counterProjector()], pollIntervalMs: 20 }, async (stale) => {
      stale.start();
      for (let i = 0; i < 200 && !(await stale.lag())[0]!.lastError; i++) await sleep(10);
      await withWorker({ projectors: [counterProjector({ version: 3, factor: 3 })], pollIntervalMs: 20 }, async (next) => {
        next.start();
        for (let i = 0; i < 400 && (await next.lag())[0]!.state !== 'following'; i++) await sleep(10);
        await next.waitUntilCaughtUp();
        expect((await next.lag())[0]).toMatchObject({ version: 3, holder: true, state: 'following' });
        expect((await stale.lag())[0]).toMatchObject({ holder: false, state: 'standby' });
      });
    });
    expect(await totals()).toEqual([['a', '9'], ['b', '30'], ['c', '18']]);
  });

  it('two workers never deliver an event twice; one holds the projection, the other takes over when it dies', async () => {
    await sql`truncate test_deliveries`.execute(handle.db);
    await sql`delete from projection_checkpoints where name = 'deliveries'`.execute(handle.db);
    const ctx = commandContext(handle);
    const options = { projectors: [deliveryProjector()], notifier: ctx.notifier, pollIntervalMs: 25, batchSize: 2 };
    const a = new ProjectionWorker(handle, options);
    const b = new ProjectionWorker(handle, options);
    a.start();
    b.start();
    try {
      await Promise.all(Array.from({ length: 12 }, (_, i) => count(ctx, `t${i % 4}`, i)));
      await a.waitUntilCaughtUp();

      const holderOf = async () => {
        const held = [(await a.lag())[0]!.holder, (await b.lag())[0]!.holder];
        expect(held.filter(Boolean).length).toBeLessThanOrEqual(1);
        return held[0] ? a : held[1] ? b : undefined;
      };
      const waitForHolder = async () => {
        for (let i = 0; i < 80; i++) {
          const h = await holderOf();
          if (h) return h;
          await sleep(25);
        }
        throw new Error('nobody took the projection over');
      };
      let holder = (await holderOf())!;
      const standby = holder === a ? b : a;
      expect((await standby.lag())[0]).toMatchObject({ state: 'standby', holder: false });

      if (onPostgres) {
        // The holder's lock connection dies: its advisory lock goes with it, and whichever
        // worker asks first (the standby or the old holder on a new connection) gets it.
        await sql`select pg_terminate_backend(pid) from pg_locks
          where locktype = 'advisory' and classid = ${ADVISORY_LOCK_CLASS}::oid and database = (select oid from pg_database where datname = current_database())`.execute(handle.db);
        await sleep(100);
        holder = await waitForHolder();
      }
      await holder.stop();
      expect(await waitForHolder()).toBe(holder === a ? b : a);
      const survivor = holder === a ? b : a;

      await Promise.all(Array.from({ length: 8 }, (_, i) => count(ctx, `t${i % 4}`, i)));
      await survivor.waitUntilCaughtUp();
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    const delivered = await deliveries(handle.db);
    const log = await eventsInLog(handle.db);
    expect(delivered).toHaveLength(log.length);
    expect(new Set(delivered.map((d) => d.event_id))).toEqual(new Set(log.map((e) => e.event_id)));
  });

  it('wakes a reactor only for the types it handles', async () => {
    const ctx = commandContext(handle);
    const seen: string[] = [];
    const reactor: Reactor = { name: 'ignored-only', handles: ['Ignored'], startAt: 'head', react: async (event) => void seen.push(event.streamId) };
    const worker = new ProjectionWorker(handle, { reactors: [reactor], commands: ctx, notifier: ctx.notifier, pollIntervalMs: 60_000 });
    worker.start();
    try {
      await worker.catchUp();
      const before = await checkpointRow('reactor:ignored-only');
      // Counted is not its type: the wake-up passes it by, its checkpoint stays.
      await count(ctx, 'wake-1', 1);
      await sleep(150);
      expect(await checkpointRow('reactor:ignored-only')).toEqual(before);
      // Ignored is: it wakes at once, long before its next poll, and reads past both.
      await ignore(ctx, 'wake-1');
      for (let i = 0; i < 200 && seen.length === 0; i++) await sleep(10);
      expect(seen).toEqual(['wake-1']);
    } finally {
      await worker.stop();
    }
  });

  it('runs reactors once per triggering event, recording a receipt', async () => {
    const ctx = commandContext(handle);
    const seen: string[] = [];
    const reactor: Reactor<CommandContext> = {
      name: 'echo',
      handles: ['Counted'],
      async react(event, commands) {
        seen.push(event.eventId);
        // A reaction issues a command on another stream (not handled: no loop).
        if (!event.streamId.startsWith('echo-')) await ignore(commands, `echo-${event.streamId}`);
      },
    };
    await withWorker({ reactors: [reactor], commands: ctx }, async (worker) => {
      await worker.catchUp();
      const counted = (await eventsInLog(handle.db)).filter((e) => e.event_type === 'Counted');
      expect(seen.sort()).toEqual(counted.map((e) => e.event_id).sort());
      const receipts = await sql<{ n: string }>`select count(*) as n from reactor_receipts where reactor = 'echo'`.execute(handle.db);
      expect(Number(receipts.rows[0]!.n)).toBe(counted.length);

      // Moving the checkpoint back does not react again: the receipts hold.
      await sql`update projection_checkpoints set transaction_id = '0', global_position = 0 where name = 'reactor:echo'`.execute(handle.db);
      await worker.catchUp();
      expect(seen).toHaveLength(counted.length);
      expect((await eventsInLog(handle.db)).filter((e) => e.stream_id.startsWith('echo-'))).toHaveLength(counted.length);
    });
  });

  it('moves past the events a reactor ignores without reacting or keeping a receipt, and ignores them again after a rewind', async () => {
    const ctx = commandContext(handle);
    const seen: string[] = [];
    const odd = (event: { data: unknown }) => (event.data as { amount: number }).amount % 2 === 1;
    const reactor: Reactor<CommandContext> = {
      name: 'evens',
      handles: ['Counted'],
      ignores: odd,
      async react(event) {
        seen.push(event.eventId);
      },
    };
    await count(ctx, 'evens-1', 3);
    await count(ctx, 'evens-1', 4);
    await withWorker({ reactors: [reactor], commands: ctx }, async (worker) => {
      await worker.catchUp();
      const { rows: counted } = await sql<{ event_id: string; data: { amount: number } }>`select event_id, data from events where event_type = 'Counted'`.execute(handle.db);
      const wanted = counted.filter((e) => !odd(e)).map((e) => e.event_id);
      expect(wanted.length).toBeGreaterThan(0);
      expect(wanted.length).toBeLessThan(counted.length);
      expect(seen.sort()).toEqual(wanted.sort());
      const receipts = await sql<{ event_id: string }>`select event_id from reactor_receipts where reactor = 'evens'`.execute(handle.db);
      expect(receipts.rows.map((r) => r.event_id).sort()).toEqual(wanted.sort());
      const { rows: head } = await sql<{ global_position: string }>`select max(global_position)::text as global_position from events`.execute(handle.db);
      expect(await checkpointRow('reactor:evens')).toMatchObject({ global_position: head[0]!.global_position });

      await sql`update projection_checkpoints set transaction_id = '0', global_position = 0 where name = 'reactor:evens'`.execute(handle.db);
      await worker.catchUp();
      expect(seen).toHaveLength(wanted.length);
    });
  });
});
