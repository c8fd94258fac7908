import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { DomainError } from '../../src/domain/errors.js';
import { readStream } from '../../src/eventstore/store.js';
import { ProjectionWorker } from '../../src/worker/runner.js';
import { openTestDatabase } from '../support/database.js';
import { commandContext, count, createDeliveryTable, deliveries, deliveryProjector, ignore, handWritten } from '../projections/fixtures.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase({ poolSize: 12 });
  await createDeliveryTable(handle.db);
});
afterAll(() => handle.close());

/** Holds the append transaction open for the event's `delayMs` before it commits. */
const delayCommit = handWritten({
  name: 'delay-commit',
  version: 1,
  mode: 'inline',
  handles: ['Counted'],
  tables: [],
  async apply(event, trx) {
    const delayMs = (event.data as { delayMs?: number }).delayMs;
    if (delayMs) await sql`select pg_sleep(${delayMs / 1000})`.execute(trx);
  },
});

/** Runs the tasks with at most `concurrency` in flight. */
async function runConcurrently<T>(tasks: readonly (() => Promise<T>)[], concurrency: number): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < tasks.length; i = next++) {
      try {
        results[i] = { status: 'fulfilled', value: await tasks[i]!() };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return results;
}

const expectOnlyConflicts = (results: readonly PromiseSettledResult<unknown>[]) => {
  for (const r of results) {
    if (r.status === 'rejected') {
      expect(r.reason).toBeInstanceOf(DomainError);
      expect((r.reason as DomainError).code).toBe('conflict');
      expect(r.reason as DomainError).toMatchObject({ code: 'conflict', subject: 'Resource lock' });
    }
  }
};

describe('concurrent writers', () => {
  it('64 concurrent commands on one stream: no lost or duplicated event, versions 1..N contiguous', async () => {
    const ctx = commandContext(handle, [delayCommit]);
    const results = await Promise.allSettled(Array.from({ length: 64 }, (_, i) => count(ctx, 'hot', i + 1, i % 4 === 0 ? 3 : 0)));
    expectOnlyConflicts(results);
    const appended = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(appended.length).toBeGreaterThan(0);

    const stream = await readStream(handle.db, 'hot');
    expect(stream.map((e) => e.streamVersion)).toEqual(Array.from({ length: appended.length }, (_, i) => i + 1));
    expect(stream.map((e) => e.eventId).sort()).toEqual(appended.map((r) => r.events[0]!.eventId).sort());
    // Each successful command's amount is in the stream exactly once.
    const amounts = stream.map((e) => (e.data as { amount: number }).amount).sort((a, b) => a - b);
    expect(amounts).toEqual(appended.map((r) => (r.events[0]!.data as { amount: number }).amount).sort((a, b) => a - b));
    expect(new Set(amounts).size).toBe(amounts.length);
    // The state each command decided on was the stream's state just before its own event.
    for (const r of appended) {
      const own = stream.find((e) => e.eventId === r.events[0]!.eventId)!;
      expect(r.version).toBe(own.streamVersion);
    }
  });

  it('an async worker following writers whose commits are delayed projects every event exactly once, each stream in version order', async () => {
    let run = 0;
    const plan = fc.record({
      streams: fc.integer({ min: 1, max: 4 }),
      commands: fc.array(fc.record({ stream: fc.nat(3), ignored: fc.boolean(), delayMs: fc.integer({ min: 0, max: 40 }) }), { minLength: 5, maxLength: 30 }),
      concurrency: fc.integer({ min: 2, max: 8 }),
      batchSize: fc.integer({ min: 1, max: 20 }),
    });
    await fc.assert(
      fc.asyncProperty(plan, async ({ streams, commands, concurrency, batchSize }) => {
        const prefix = `run${run++}-`;
        const ctx = commandContext(handle, [delayCommit]);
        const worker = new ProjectionWorker(handle, {
          projectors: [deliveryProjector()],
          notifier: ctx.notifier,
          pollIntervalMs: 10,
          batchSize,
        });
        worker.start();
        try {
          const results = await runConcurrently(
            commands.map((c, i) => () => {
              const stream = `${prefix}${c.stream % streams}`;
              return c.ignored ? ignore(ctx, stream) : count(ctx, stream, i, c.delayMs);
            }),
            concurrency,
          );
          expectOnlyConflicts(results);
          await worker.waitUntilCaughtUp({ timeoutMs: 20_000 });
          const appended = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.events.map((e) => e.eventId) : []));

          const delivered = (await deliveries(handle.db)).filter((d) => d.stream_id.startsWith(prefix));
          expect(delivered.map((d) => d.event_id).sort()).toEqual([...appended].sort());
          for (let s = 0; s < streams; s++) {
            const versions = delivered.filter((d) => d.stream_id === `${prefix}${s}`).map((d) => d.stream_version);
            expect(versions).toEqual(Array.from({ length: versions.length }, (_, i) => i + 1));
          }
        } finally {
          await worker.stop();
        }
      }),
      { numRuns: 8, endOnFailure: true },
    );
    // Across all runs (the worker stopped and started between them): nothing twice.
    const all = await deliveries(handle.db);
    expect(new Set(all.map((d) => d.event_id)).size).toBe(all.length);
  });
});
