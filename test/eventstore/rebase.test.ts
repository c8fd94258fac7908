import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { advanceTransactionIds, rebaseTransactionIds } from '../../src/eventstore/rebase.js';
import { sealPending } from '../../src/eventstore/seal.js';
import { readAllAfter } from '../../src/eventstore/store.js';
import { LOG_START, type Checkpoint } from '../../src/eventstore/types.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { openTestDatabase } from '../support/database.js';
import { append, appendWithTransactionId, gapFreeOrder, tamper, waitUntilReadable } from './audit-support.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

const currentXid = async () => BigInt((await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(handle.db)).rows[0]!.xid);

async function checkpoint(name: string): Promise<Checkpoint> {
  const row = await handle.db.selectFrom('projection_checkpoints').select(['transaction_id', 'global_position']).where('name', '=', name).executeTakeFirstOrThrow();
  return { transactionId: String(row.transaction_id), globalPosition: String(row.global_position) };
}

async function setCheckpoint(name: string, at: Checkpoint) {
  await sql`insert into projection_checkpoints (name, version, transaction_id, global_position)
            values (${name}, 1, ${at.transactionId}::xid8, ${at.globalPosition}::bigint)`.execute(handle.db);
}

const positionsAfter = async (after: Checkpoint) => (await readAllAfter(handle.db, after, 1000)).map((e) => e.globalPosition);

describe('rebaseTransactionIds', () => {
  // Both backends can stage it: a logical restore is simulated by shifting every stored
  // transaction id (events, seals, checkpoints) far ahead of the cluster's counter.
  /** The log's positions grouped by the transaction that wrote them (the activity feeds' "committed with the creation"). */
  const committedTogether = async () =>
    (await sql<{ positions: string[] }>`select array_agg(global_position::text order by global_position) as positions from events group by transaction_id order by min(global_position)`.execute(handle.db)).rows.map((r) => r.positions);

  it('re-bases a log restored ahead of the cluster, keeping the gap-free order, the seals and the checkpoints', async () => {
    // A log whose gap-free order differs from position order, as concurrent writers leave
    // it: positions in (transaction_id, position) order are 2 4 1 3 6 5 7 8 9.
    const t = Number(await currentXid()) - 100;
    const p1 = await appendWithTransactionId(handle.db, 's-a', 'A1', t + 20);
    await appendWithTransactionId(handle.db, 's-b', 'B1', t + 10);
    const p3 = await appendWithTransactionId(handle.db, 's-a', 'A2', t + 20);
    await appendWithTransactionId(handle.db, 's-c', 'C1', t + 15);
    await appendWithTransactionId(handle.db, 's-b', 'B2', t + 30);
    await appendWithTransactionId(handle.db, 's-d', 'D1', t + 25);
    await append(handle.db, 's-a', ['A3']);
    await append(handle.db, 's-e', ['E1', 'E2']);
    await waitUntilReadable(handle.db);
    const before = await gapFreeOrder(handle.db);
    const offset = (n: string) => Number(n) - Number(p1.globalPosition) + 1;
    expect(before.map(offset)).toEqual([2, 4, 1, 3, 6, 5, 7, 8, 9]);

    expect(await sealPending(handle.db, { maxEventsPerSeal: 4 })).toMatchObject({ seals: 3, events: 9 });
    const together = await committedTogether();
    const a2 = { transactionId: String(t + 20), globalPosition: p3.globalPosition };
    const last = (await readAllAfter(handle.db, LOG_START, 100)).at(-1)!;
    await setCheckpoint('at-a2', a2);
    await setCheckpoint('between', { transactionId: String(t + 22), globalPosition: '100000' });
    await setCheckpoint('at-end', { transactionId: last.transactionId, globalPosition: last.globalPosition });
    await setCheckpoint('at-start', LOG_START);
    const afterA2 = await positionsAfter(a2);
    expect(afterA2.map(offset)).toEqual([6, 5, 7, 8, 9]);

    // The "restore": every stored id 10 billion ahead (a source cluster in a later epoch).
    await tamper(handle.db, async (trx) => {
      await sql`update events set transaction_id = (transaction_id::text::bigint + 10000000000)::text::xid8`.execute(trx);
      await sql`update event_seals set first_transaction_id = (first_transaction_id::text::bigint + 10000000000)::text::xid8,
                                       last_transaction_id = (last_transaction_id::text::bigint + 10000000000)::text::xid8`.execute(trx);
      await sql`update projection_checkpoints set transaction_id = (transaction_id::text::bigint + 10000000000)::text::xid8
                 where transaction_id > '0'::xid8`.execute(trx);
    });

    // Stalled: gap-free readers see nothing, appends to restored streams are refused.
    expect(await readAllAfter(handle.db, LOG_START, 100)).toEqual([]);
    await expect(append(handle.db, 's-a', ['A4'])).rejects.toMatchObject({ code: '40001' });
    expect(await rebaseTransactionIds(handle.db, { dryRun: true })).toMatchObject({ needed: true, rebased: false, eventsRewritten: 0 });

    const report = await rebaseTransactionIds(handle.db);
    expect(report).toMatchObject({
      needed: true,
      rebased: true,
      transactionIds: 7, // one per stored id: (2) (4) (1 3) (6) (5) (7) (8 9)
      eventsRewritten: 9,
      sealsRewritten: 3,
      checkpointsRewritten: 3,
      advanced: 0,
    });
    expect(BigInt(report.maxTransactionIdAfter!)).toBeLessThan(BigInt(report.snapshotXmin));

    // Same order, the same events committed together, same seals, checkpoints on the same events.
    expect(await gapFreeOrder(handle.db)).toEqual(before);
    expect(await committedTogether()).toEqual(together);
    expect((await readAllAfter(handle.db, LOG_START, 100)).map((e) => e.globalPosition)).toEqual(before);
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, sealsChecked: 3, sealedEvents: 9, unsealedEvents: 0 });
    expect(await checkpoint('at-start')).toEqual(LOG_START);
    expect((await checkpoint('at-a2')).globalPosition).toBe(p3.globalPosition);
    expect(await checkpoint('between')).toEqual(await checkpoint('at-a2'));
    expect(await positionsAfter(await checkpoint('at-a2'))).toEqual(afterA2);
    expect(await positionsAfter(await checkpoint('at-end'))).toEqual([]);

    // Writing and reading go on; the new event sorts after the re-based ones.
    const [a4] = await append(handle.db, 's-a', ['A4']);
    await waitUntilReadable(handle.db);
    expect(await positionsAfter(await checkpoint('at-end'))).toEqual([a4!.globalPosition]);
    expect(await sealPending(handle.db)).toMatchObject({ seals: 1, events: 1 });
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, sealsChecked: 4 });

    // Idempotent.
    expect(await rebaseTransactionIds(handle.db)).toMatchObject({ needed: false, rebased: false });
    await expect(sql`update events set transaction_id = '5'::xid8`.execute(handle.db)).rejects.toThrow(/append-only/);
  });

  it('consumes transaction ids to make room when asked', async () => {
    const before = await currentXid();
    await advanceTransactionIds(handle.db, 50);
    expect((await currentXid()) - before).toBeGreaterThanOrEqual(50n);
  });
});
