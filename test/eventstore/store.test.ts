import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { GENESIS_HASH, appendToStream, checkpointOf, readAllAfter, readStream, readTypesAfter } from '../../src/eventstore/store.js';
import { LOG_START } from '../../src/eventstore/types.js';
import { onPostgres, openTestDatabase } from '../support/database.js';
import { waitUntilReadable } from './audit-support.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

const append = (streamId: string, expectedVersion: number, headHash: string, types: string[]) =>
  handle.db.transaction().execute((trx) =>
    appendToStream(trx, {
      streamId,
      expectedVersion,
      headHash,
      events: types.map((type) => ({ type, data: { type } })),
      metadata: { actor_id: 1 },
      occurredAt: new Date('2026-01-01T00:00:00.000Z'),
    }),
  );

describe('event store', () => {
  it('appends at the expected version, chains hashes and reads the stream back', async () => {
    const first = await append('s-1', 0, GENESIS_HASH, ['A', 'B']);
    expect(first.map((e) => e.streamVersion)).toEqual([1, 2]);
    const stream = await readStream(handle.db, 's-1');
    expect(stream.map((e) => e.type)).toEqual(['A', 'B']);
    expect(stream[0]!.hash).toHaveLength(64);
    expect(stream[1]!.hash).not.toBe(stream[0]!.hash);
    expect(typeof stream[0]!.globalPosition).toBe('string');
    expect(stream[0]!.occurredAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('refuses an append at a stale version (unique violation)', async () => {
    await expect(append('s-1', 1, GENESIS_HASH, ['C'])).rejects.toMatchObject({ code: '23505' });
    expect((await readStream(handle.db, 's-1')).length).toBe(2);
  });

  it('refuses UPDATE, DELETE and TRUNCATE on the log', async () => {
    await expect(sql`update events set event_type = 'X'`.execute(handle.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from events`.execute(handle.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate events`.execute(handle.db)).rejects.toThrow(/append-only/);
  });

  it('reads the global log in gap-free order after a checkpoint', async () => {
    await append('s-2', 0, GENESIS_HASH, ['D']);
    // Transactions of other test databases in the cluster can hold back the snapshot xmin.
    await waitUntilReadable(handle.db);
    const all = await readAllAfter(handle.db, LOG_START, 100);
    expect(all.map((e) => e.type)).toEqual(['A', 'B', 'D']);
    const rest = await readAllAfter(handle.db, { transactionId: all[0]!.transactionId, globalPosition: all[0]!.globalPosition }, 100);
    expect(rest.map((e) => e.type)).toEqual(['B', 'D']);
  });

  it('reads only some types after a checkpoint, and says how far the log was read', async () => {
    await waitUntilReadable(handle.db);
    const all = await readAllAfter(handle.db, LOG_START, 100); // A, B (s-1), D (s-2)
    const onlyB = await readTypesAfter(handle.db, LOG_START, ['B'], 100);
    expect(onlyB.events.map((e) => e.type)).toEqual(['B']);
    // The D after it was read too: nothing of type B is missing up to there.
    expect(onlyB.through).toEqual(checkpointOf(all.at(-1)!));
    // A full page stops at its last event.
    const page = await readTypesAfter(handle.db, LOG_START, ['A', 'D'], 1);
    expect(page.events.map((e) => e.type)).toEqual(['A']);
    expect(page.through).toEqual(checkpointOf(all[0]!));
    // Nothing new: the checkpoint stays.
    expect(await readTypesAfter(handle.db, onlyB.through, ['B'], 100)).toEqual({ events: [], through: onlyB.through, heldBack: false });
  });

  // The horizon is the newest event by its xid8 column, not by the text the query returns:
  // ordered as text, '999' came after '1156', and a worker waiting for the head
  // (waitUntilCaughtUp) took an event of transaction 999 for it. PGlite's transaction ids
  // start below 1,000, so the embedded database crosses a power of ten within the test.
  it.runIf(!onPostgres)('says how far the log was read when transaction ids cross a power of ten', async () => {
    const xid = async () => Number((await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(handle.db)).rows[0]!.xid);
    const crossing = 10 ** Math.ceil(Math.log10((await xid()) + 2));
    expect(crossing).toBeLessThanOrEqual(10_000);
    let version = 0;
    let last = await append('crossing', version++, GENESIS_HASH, ['C']);
    while ((await xid()) < crossing) last = await append('crossing', version++, last.at(-1)!.hash, ['C']);
    last = await append('crossing', version++, last.at(-1)!.hash, ['C']);
    await waitUntilReadable(handle.db);
    expect((await readTypesAfter(handle.db, LOG_START, ['none'], 100)).through).toEqual(checkpointOf(last.at(-1)!));
  });
});
