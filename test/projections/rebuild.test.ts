import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { GENESIS_HASH, appendToStream } from '../../src/eventstore/store.js';
import { SHADOW_SCHEMA, rebuildProjections } from '../../src/projections/rebuild.js';
import { ProjectionWorker } from '../../src/worker/runner.js';
import { openTestDatabase } from '../support/database.js';
import { expectReplayEquivalence, snapshotTables } from '../support/replay.js';
import { commandContext, count, counterProjector, createCounterTable, createDeliveryTable, deliveries, deliveryProjector, ignore, handWritten } from './fixtures.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase({ poolSize: 12 });
  await createCounterTable(handle.db);
  await createDeliveryTable(handle.db);
});
afterAll(() => handle.close());

const inlineCounter = counterProjector({ mode: 'inline' });

const tableOid = async (table: string) =>
  (await sql<{ oid: number }>`select ${`public.${table}`}::regclass::oid as oid`.execute(handle.db)).rows[0]!.oid;
const indexesOf = async (table: string) =>
  (await sql<{ indexname: string; indexdef: string }>`select indexname, indexdef from pg_indexes where schemaname = 'public' and tablename = ${table} order by indexname`.execute(handle.db)).rows;
const shadowSchemaExists = async () =>
  (await sql<{ n: string }>`select count(*) as n from pg_namespace where nspname = ${SHADOW_SCHEMA}`.execute(handle.db)).rows[0]!.n !== '0';
const checkpoint = async (name: string) =>
  (await sql<{ version: number; global_position: string }>`select version, global_position from projection_checkpoints where name = ${name}`.execute(handle.db)).rows[0];

/** Appends `n` events over `streams` streams straight to the log, in one transaction per stream. */
async function appendMany(n: number, streams: number, prefix: string) {
  for (let s = 0; s < streams; s++) {
    const events = Array.from({ length: Math.ceil(n / streams) }, (_, i) =>
      i % 5 === 4 ? { type: 'Ignored', data: {} } : { type: 'Counted', data: { amount: i } },
    );
    await handle.db.transaction().execute((trx) =>
      appendToStream(trx, { streamId: `${prefix}${s}`, expectedVersion: 0, headHash: GENESIS_HASH, events, metadata: {}, occurredAt: new Date() }),
    );
  }
}

describe('rebuildProjections', () => {
  it('replays the log into fresh tables and swaps them in: same rows, same index names, checkpoint recorded', async () => {
    const ctx = commandContext(handle, [inlineCounter]);
    for (let i = 0; i < 12; i++) await count(ctx, `r${i % 4}`, i + 1);
    await ignore(ctx, 'r0');
    const before = await snapshotTables(handle.db, ['test_counts']);
    const indexes = await indexesOf('test_counts');
    const oid = await tableOid('test_counts');
    const progress: [number, number][] = [];

    const result = await rebuildProjections(handle, [inlineCounter], { batchSize: 5, onProgress: (done, total) => progress.push([done, total]) });

    expect(await snapshotTables(handle.db, ['test_counts'])).toEqual(before);
    expect(await tableOid('test_counts')).not.toBe(oid);
    expect(await indexesOf('test_counts')).toEqual(indexes);
    expect(await shadowSchemaExists()).toBe(false);
    expect(result.events).toBe(12);
    expect(progress[0]).toEqual([0, 12]);
    expect(progress.at(-1)).toEqual([12, 12]);
    const head = (await sql<{ p: string }>`select max(global_position) as p from events`.execute(handle.db)).rows[0]!.p;
    expect(await checkpoint('counts')).toEqual({ version: 1, global_position: head });
    expect(result.projections).toEqual([{ name: 'counts', version: 1, checkpoint: expect.objectContaining({ globalPosition: head }) }]);
  });

  it('lets inline writes made during a rebuild land in the new table', async () => {
    await appendMany(600, 6, 'bulk-');
    const ctx = commandContext(handle, [inlineCounter]);
    const writes = Promise.all(Array.from({ length: 40 }, (_, i) => count(ctx, `live${i % 5}`, i)));
    const rebuild = rebuildProjections(handle, [inlineCounter], { batchSize: 50 });
    await Promise.all([writes, rebuild]);
    await count(ctx, 'live0', 1000);

    const rows = (await snapshotTables(handle.db, ['test_counts'])).test_counts as { stream_id: string; events: number; total: string }[];
    const { rows: expected } = await sql<{ stream_id: string; events: string; total: string }>`
      select stream_id, count(*) as events, sum((data->>'amount')::bigint) as total from events
       where event_type = 'Counted' group by stream_id order by stream_id`.execute(handle.db);
    expect(rows.map((r) => [r.stream_id, r.events, r.total]).sort()).toEqual(expected.map((r) => [r.stream_id, Number(r.events), r.total]).sort());
    await expectReplayEquivalence(handle, [inlineCounter]);
  });

  it('keeps the sequence of a serial column and leaves an async projection where its worker resumes', async () => {
    const worker = new ProjectionWorker(handle, { projectors: [deliveryProjector()] });
    try {
      await worker.catchUp();
      const ids = (await deliveries(handle.db)).map((d) => d.event_id).sort();
      await rebuildProjections(handle, [deliveryProjector()]);
      expect((await deliveries(handle.db)).map((d) => d.event_id).sort()).toEqual(ids);
      const { rows } = await sql<{ seq: string | null }>`select pg_get_serial_sequence('public.test_deliveries', 'seq') as seq`.execute(handle.db);
      expect(rows[0]!.seq).toBe('public.test_deliveries_seq_seq');

      await count(commandContext(handle), 'after-rebuild', 1);
      expect(await worker.catchUp()).toBe(1);
    } finally {
      await worker.stop();
    }
    const all = await deliveries(handle.db);
    expect(new Set(all.map((d) => d.seq)).size).toBe(all.length);
    expect(new Set(all.map((d) => d.event_id)).size).toBe(all.length);
  });

  it('drops a left-over shadow schema first, and cleans up after a failed rebuild leaving the live table as it was', async () => {
    await sql.raw(`create schema ${SHADOW_SCHEMA}`).execute(handle.db);
    await sql.raw(`create table ${SHADOW_SCHEMA}.test_counts (junk int)`).execute(handle.db);
    await rebuildProjections(handle, [inlineCounter]);
    expect(await shadowSchemaExists()).toBe(false);

    const before = await snapshotTables(handle.db, ['test_counts']);
    const oid = await tableOid('test_counts');
    const broken = handWritten({
      ...inlineCounter,
      applyBatch: undefined,
      async apply(event) {
        if (event.streamId === 'r3') throw new Error('projector bug');
      },
    });
    await expect(rebuildProjections(handle, [broken], { batchSize: 7 })).rejects.toThrow('projector bug');
    expect(await shadowSchemaExists()).toBe(false);
    expect(await tableOid('test_counts')).toBe(oid);
    expect(await snapshotTables(handle.db, ['test_counts'])).toEqual(before);
  });
});
