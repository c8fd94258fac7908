import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { DatabaseHandle } from '../../src/database/database.js';
import { feedColumns, type FeedIndexOf } from '../../src/eventstore/feed-index.js';
import { GENESIS_HASH, eventHash } from '../../src/eventstore/hash.js';
import { MerkleBuilder, leafFieldsOfRow, merkleLeaf, runSealWorker, sealHash, sealPending } from '../../src/eventstore/seal.js';
import { rootAt, treeSize } from '../../src/eventstore/log-tree.js';
import { registerEventType } from '../../src/eventstore/upcasters.js';
import { verifyLog, type VerifyProgress } from '../../src/eventstore/verify.js';
import { openTestDatabase } from '../support/database.js';
import { append, appendWithTransactionId, backupLog, resetLog, restoreLog, tamper, waitUntilReadable } from './audit-support.js';

describe('Merkle root', () => {
  // RFC 6962 §2.1, written recursively: the split is the largest power of two below n.
  const reference = (leaves: Buffer[]): Buffer => {
    if (leaves.length === 0) return createHash('sha256').digest();
    if (leaves.length === 1) return leaves[0]!;
    let k = 1;
    while (k * 2 < leaves.length) k *= 2;
    return createHash('sha256')
      .update(Buffer.from([1]))
      .update(reference(leaves.slice(0, k)))
      .update(reference(leaves.slice(k)))
      .digest();
  };

  const leaf = (i: number) => createHash('sha256').update(`leaf ${i}`).digest();
  const rootOf = (leaves: Buffer[]) => {
    const builder = new MerkleBuilder();
    for (const l of leaves) builder.addLeaf(l);
    return builder.root();
  };

  it('is RFC 6962 Merkle Tree Hash for every size, odd ones included (no duplicated leaf)', () => {
    for (let n = 0; n <= 33; n++) {
      const leaves = Array.from({ length: n }, (_, i) => leaf(i));
      expect(rootOf(leaves), `n = ${n}`).toBe(reference(leaves).toString('hex'));
    }
  });

  it('changes when leaves are reordered, removed or duplicated', () => {
    const [a, b, c] = [leaf(1), leaf(2), leaf(3)];
    const roots = [rootOf([a, b, c]), rootOf([b, a, c]), rootOf([a, b]), rootOf([a, b, c, c]), rootOf([a, c, b])];
    expect(new Set(roots).size).toBe(roots.length);
  });

  it('has leaves covering the position, the stored hash and the content', () => {
    const event = {
      globalPosition: '1',
      hash: 'a'.repeat(64),
      streamId: 's',
      streamVersion: 1,
      eventId: '00000000-0000-7000-8000-000000000000',
      type: 'A',
      schemaVersion: 1,
      data: { x: 1 },
      metadata: {},
      occurredAt: new Date(0),
    };
    const leaves = [event, { ...event, globalPosition: '2' }, { ...event, hash: 'b'.repeat(64) }, { ...event, data: { x: 2 } }].map((e) => merkleLeaf(e).toString('hex'));
    expect(new Set(leaves).size).toBe(4);
  });
});

/** Seven events over three streams (positions 1–7), sealed in ranges of three: 1–3, 4–6, 7. */
const buildSealedLog = async (handle: DatabaseHandle) => {
  await append(handle.db, 'group-1', ['GroupCreated', 'GroupRenamed']);
  await append(handle.db, 'user-1', ['UserCreated']);
  await append(handle.db, 'group-1', ['GroupRenamed']);
  await append(handle.db, 'project-1', ['ProjectCreated', 'ProjectArchived', 'ProjectUnarchived']);
  await waitUntilReadable(handle.db);
  return sealPending(handle.db, { maxEventsPerSeal: 3 });
};

// One database for the file (opening one is the slow part): each block starts from an empty log.
let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

describe('sealPending', () => {
  beforeAll(() => resetLog(handle.db));

  it('seals everything sealable in consecutive chained ranges, once', async () => {
    const first = await buildSealedLog(handle);
    expect(first).toMatchObject({ seals: 3, events: 7 });
    expect(await sealPending(handle.db, { maxEventsPerSeal: 3 })).toMatchObject({ seals: 0, events: 0, headSealHash: first.headSealHash });

    await append(handle.db, 'user-1', ['UserBlocked']);
    await waitUntilReadable(handle.db);
    const second = await sealPending(handle.db, { maxEventsPerSeal: 3 });
    expect(second).toMatchObject({ seals: 1, events: 1 });

    const seals = await handle.db.selectFrom('event_seals').selectAll().orderBy('id').execute();
    expect(seals.map((s) => s.event_count)).toEqual([3, 3, 1, 1]);
    expect(seals[0]!.previous_seal_hash).toBe(GENESIS_HASH);
    for (let i = 1; i < seals.length; i++) expect(seals[i]!.previous_seal_hash).toBe(seals[i - 1]!.seal_hash);
    for (const seal of seals) expect(sealHash(seal)).toBe(seal.seal_hash);
    expect(seals.at(-1)!.seal_hash).toBe(second.headSealHash);

    const progress: VerifyProgress[] = [];
    const report = await verifyLog(handle.db, { pageSize: 2, onProgress: (p) => progress.push(p) });
    expect(report).toMatchObject({ ok: true, streamsChecked: 3, eventsChecked: 8, sealsChecked: 4, sealedEvents: 8, unsealedEvents: 0, problems: [] });
    expect(report.lastSealHash).toBe(second.headSealHash);
    expect(progress.some((p) => p.phase === 'streams') && progress.some((p) => p.phase === 'seals')).toBe(true);
  });

  it('leaves a tail shorter than minEventsPerSeal for later and counts it as unsealed', async () => {
    await append(handle.db, 'user-2', ['UserCreated', 'UserBlocked']);
    await waitUntilReadable(handle.db);
    expect(await sealPending(handle.db, { minEventsPerSeal: 3 })).toMatchObject({ seals: 0, heldBack: false });
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, sealsChecked: 4, unsealedEvents: 2, eventsChecked: 10 });
    expect(await sealPending(handle.db)).toMatchObject({ seals: 1, events: 2 });
  });

  it('refuses a second seal of the same range (unique first position / previous hash)', async () => {
    const seal = await handle.db.selectFrom('event_seals').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const { id: _id, created_at: _at, ...copy } = seal;
    await expect(handle.db.insertInto('event_seals').values({ ...copy, created_at: new Date().toISOString() }).execute()).rejects.toMatchObject({ code: '23505' });
  });

  it('lets concurrent sealers write one chain, never a range twice', async () => {
    for (let i = 0; i < 6; i++) await append(handle.db, `s-${i}`, ['A', 'B', 'C']);
    await waitUntilReadable(handle.db);
    const results = await Promise.all(Array.from({ length: 4 }, () => sealPending(handle.db, { maxEventsPerSeal: 2 })));
    expect(results.reduce((n, r) => n + r.events, 0)).toBe(18);
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, sealsChecked: 5 + 9, unsealedEvents: 0 });
  });

  it('gives a log sealed before the log tree existed (migration 0057) its leaves first, in pages, then seals on', async () => {
    const before = await treeSize(handle.db);
    const root = await rootAt(handle.db, before);
    expect(before).toBe(Number((await sql<{ n: string }>`select sum(event_count) as n from event_seals`.execute(handle.db)).rows[0]!.n));
    await tamper(handle.db, async (trx) => {
      for (const table of ['log_tree_leaves', 'log_tree_nodes', 'log_tree_heads']) await sql.raw(`delete from ${table}`).execute(trx);
    });
    await append(handle.db, 'user-1', ['UserUnblocked']);
    await waitUntilReadable(handle.db);
    expect(await sealPending(handle.db, { maxEventsPerSeal: 4 })).toMatchObject({ seals: 1, events: 1 });
    expect(await treeSize(handle.db)).toBe(before + 1);
    expect(await rootAt(handle.db, before)).toEqual(root);
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, treeSize: before + 1 });
  });

  it('runs as a worker loop until aborted', async () => {
    await append(handle.db, 'user-3', ['UserCreated']);
    await waitUntilReadable(handle.db);
    const controller = new AbortController();
    const sealed: number[] = [];
    await runSealWorker(handle.db, {
      intervalMs: 20,
      signal: controller.signal,
      onSealed: (r) => {
        sealed.push(r.events);
        controller.abort();
      },
    });
    expect(sealed).toEqual([1]);
  });

  /** Runs the worker with a ten-minute idle wait for `count` rounds: when each began, in ms from the start. */
  async function roundsOfSealWorker(count: number, afterRound: () => { wakeInMs?: number }): Promise<number[]> {
    const controller = new AbortController();
    const rounds: number[] = [];
    const started = Date.now();
    await runSealWorker(handle.db, {
      intervalMs: 600_000,
      signal: controller.signal,
      afterRound: async () => {
        rounds.push(Date.now() - started);
        if (rounds.length === count) controller.abort();
        return afterRound();
      },
    });
    return rounds;
  }

  it('runs afterRound after each round (where heads are signed) and wakes when it asks, however long the idle wait', async () => {
    const rounds = await roundsOfSealWorker(2, () => ({ wakeInMs: 20 }));
    expect(rounds).toHaveLength(2);
    expect(rounds[1]!).toBeLessThan(10_000);
  });

  it('does not seal events of transactions still running (gap-free read)', async () => {
    await append(handle.db, 'user-4', ['UserCreated']);
    await waitUntilReadable(handle.db);
    // An event whose transaction id is in the future stands for one not committed yet.
    const { rows } = await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(handle.db);
    await appendWithTransactionId(handle.db, 'user-5', 'UserCreated', Number(rows[0]!.xid) + 1000);
    expect(await sealPending(handle.db)).toMatchObject({ seals: 1, events: 1, heldBack: true });
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, unsealedEvents: 1 });
  });

  it('retries soon, not at its idle poll, while committed events wait behind the horizon (nothing will wake it)', async () => {
    // The event above, of a "future" transaction, stands for one held back by a transaction of
    // another database: no append here wakes the sealer when that one ends.
    const rounds = await roundsOfSealWorker(3, () => ({}));
    expect(rounds).toHaveLength(3);
    expect(rounds[2]!).toBeLessThan(60_000);
  });
});

describe('verifyLog finds tampering', () => {
  beforeAll(async () => {
    await resetLog(handle.db);
    await buildSealedLog(handle);
    await backupLog(handle.db);
  });
  afterEach(() => restoreLog(handle.db));

  it('finds nothing in an untouched log', async () => {
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, eventsChecked: 7, sealsChecked: 3, problems: [], problemCount: 0 });
  });

  it('finds altered data: the stream chain and the seal over it', async () => {
    await tamper(handle.db, (trx) => sql`update events set data = '{"type":"ProjectArchived","i":99}' where global_position = 6`.execute(trx));
    const report = await verifyLog(handle.db);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({ kind: 'hash_mismatch', streamId: 'project-1', position: '6' }),
      expect.objectContaining({ kind: 'seal_mismatch', sealId: '2', detail: expect.stringMatching(/Merkle root differs/) }),
    ]);
  });

  it('finds altered metadata', async () => {
    await tamper(handle.db, (trx) => sql`update events set metadata = metadata || '{"actor_id":2}' where stream_id = 'user-1'`.execute(trx));
    const report = await verifyLog(handle.db);
    expect(report.problems.map((p) => [p.kind, p.streamId ?? p.sealId])).toEqual([
      ['hash_mismatch', 'user-1'],
      ['seal_mismatch', '1'],
    ]);
  });

  it('finds an altered event whose hash was recomputed: the next link, the seal and the log tree', async () => {
    const [event, previous] = await Promise.all([
      handle.db.selectFrom('events').selectAll().where('global_position', '=', '2').executeTakeFirstOrThrow(),
      handle.db.selectFrom('events').select('hash').where('global_position', '=', '1').executeTakeFirstOrThrow(),
    ]);
    const forged = { ...leafFieldsOfRow(event), data: { forged: true } };
    const hash = eventHash(previous.hash, forged);
    await tamper(handle.db, (trx) => sql`update events set data = '{"forged":true}', hash = ${hash} where global_position = 2`.execute(trx));
    const report = await verifyLog(handle.db);
    expect(report.problems.map((p) => [p.kind, p.position])).toEqual([
      ['hash_mismatch', '4'], // group-1 v3 no longer chains to v2
      ['seal_mismatch', '1'],
      ['tree_mismatch', '2'], // the stored hash is the tree's leaf data
    ]);
  });

  it('finds a deleted event: a version gap, a seal that lost an event and a log tree whose leaves moved', async () => {
    await tamper(handle.db, (trx) => sql`delete from events where stream_id = 'group-1' and stream_version = 2`.execute(trx));
    const report = await verifyLog(handle.db);
    expect(report.problems).toEqual([
      expect.objectContaining({ kind: 'version_gap', streamId: 'group-1', detail: expect.stringMatching(/version 2 is missing/) }),
      expect.objectContaining({ kind: 'seal_mismatch', sealId: '1', detail: expect.stringMatching(/2 events now in its range, 3 sealed/) }),
      expect.objectContaining({ kind: 'tree_mismatch', detail: expect.stringMatching(/^the stored log tree's leaf 1 is not the event at position 3 as stored \(and 4 leaves after it\)/) }),
    ]);
  });

  it('finds a deleted stream head: only the seal and the log tree can tell', async () => {
    await tamper(handle.db, (trx) => sql`delete from events where global_position = 7`.execute(trx));
    const report = await verifyLog(handle.db);
    expect(report.problems).toEqual([
      expect.objectContaining({ kind: 'seal_mismatch', sealId: '3' }),
      expect.objectContaining({ kind: 'tree_mismatch', detail: 'the stored log tree holds 7 leaves, the log only 6 events: events were removed' }),
    ]);
  });

  it('finds reordered versions within a stream', async () => {
    await tamper(handle.db, async (trx) => {
      await sql`update events set stream_version = 100 where stream_id = 'project-1' and stream_version = 2`.execute(trx);
      await sql`update events set stream_version = 2 where stream_id = 'project-1' and stream_version = 3`.execute(trx);
      await sql`update events set stream_version = 3 where stream_id = 'project-1' and stream_version = 100`.execute(trx);
    });
    const report = await verifyLog(handle.db);
    expect(report.problems.map((p) => [p.kind, p.streamId ?? p.sealId])).toEqual([
      ['hash_mismatch', 'project-1'],
      ['hash_mismatch', 'project-1'],
      ['seal_mismatch', '2'],
      ['seal_mismatch', '3'],
    ]);
  });

  it('finds events reordered in the global log (transaction ids swapped)', async () => {
    // global_position is an identity column; the gap-free order can still be shuffled.
    await tamper(handle.db, (trx) =>
      sql`update events e set transaction_id = o.transaction_id
            from events o where (e.global_position, o.global_position) in ((3, 4), (4, 3))`.execute(trx),
    );
    const report = await verifyLog(handle.db);
    expect(report.problems.filter((p) => p.kind === 'seal_mismatch').map((p) => p.sealId)).toEqual(['1', '2']);
  });

  it('finds a stream rewritten with a fresh, valid chain: the seals do', async () => {
    await tamper(handle.db, (trx) => sql`delete from events where stream_id = 'user-1'`.execute(trx));
    const seal = await handle.db.selectFrom('event_seals').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    await appendWithTransactionId(handle.db, 'user-1', 'UserCreated', Number(seal.first_transaction_id));
    const report = await verifyLog(handle.db);
    expect(report.problems.map((p) => p.kind)).toEqual(['seal_mismatch', 'tree_mismatch']);
  });

  it('finds an event inserted between two seals', async () => {
    const seals = await handle.db.selectFrom('event_seals').selectAll().orderBy('id').execute();
    // Seal 1's last transaction id with a higher position: after seal 1, before seal 2.
    const intruder = await appendWithTransactionId(handle.db, 'intruder', 'Planted', Number(seals[0]!.last_transaction_id));
    const report = await verifyLog(handle.db);
    expect(report.problems).toEqual([
      expect.objectContaining({ kind: 'unsealed_event', streamId: 'intruder', sealId: '2' }),
      expect.objectContaining({ kind: 'tree_mismatch', position: intruder.globalPosition }),
    ]);
  });

  it('finds a removed, altered or forged seal', async () => {
    await tamper(handle.db, async (trx) => {
      await sql`delete from event_seals where id = 2`.execute(trx);
      await sql`update event_seals set event_count = 4 where id = 3`.execute(trx);
    });
    const report = await verifyLog(handle.db);
    expect(report.problems.map((p) => `${p.kind}@${p.sealId}`)).toEqual([
      'seal_chain_broken@3',
      'seal_hash_mismatch@3',
      'unsealed_event@3',
      'unsealed_event@3',
      'unsealed_event@3',
      'seal_mismatch@3',
    ]);
  });
});

describe('the seal chain is append-only', () => {
  beforeAll(async () => {
    await resetLog(handle.db);
    await buildSealedLog(handle);
  });

  it('refuses UPDATE, DELETE and TRUNCATE of seals (SQLSTATE 55000) and keeps them as they were', async () => {
    const before = await handle.db.selectFrom('event_seals').selectAll().orderBy('id').execute();
    expect(before).toHaveLength(3);
    const refused = [
      ['UPDATE', sql`update event_seals set event_count = 4 where id = 3`],
      ['DELETE', sql`delete from event_seals where id = 2`],
      ['DELETE', sql`delete from event_seals`],
      ['TRUNCATE', sql`truncate event_seals`],
      ['TRUNCATE', sql`truncate events, event_seals`],
    ] as const;
    for (const [operation, statement] of refused) {
      await expect(statement.execute(handle.db)).rejects.toMatchObject({ code: '55000', message: expect.stringContaining(`append-only: ${operation} refused`) });
    }
    expect(await handle.db.selectFrom('event_seals').selectAll().orderBy('id').execute()).toEqual(before);
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, sealsChecked: 3, sealedEvents: 7 });
  });

  it('still takes new seals', async () => {
    await append(handle.db, 'user-1', ['UserBlocked']);
    await waitUntilReadable(handle.db);
    expect(await sealPending(handle.db)).toMatchObject({ seals: 1, events: 1 });
    expect(await verifyLog(handle.db)).toMatchObject({ ok: true, sealsChecked: 4 });
  });
});

describe('verifyLog recomputes the feed index columns', () => {
  // audit-support's append indexes event i of a call as { projectId: 7, targetType: 'Thing', targetId: i }, actor 1.
  const feedIndex: FeedIndexOf = (type, data, metadata) =>
    type === 'Planted' ? undefined : feedColumns({ projectId: 7, targetType: 'Thing', targetId: (data as { n: number }).n }, metadata);
  // ThingRenumbered was appended at schema version 1 as { i }; version 2 calls it { n }.
  registerEventType('ThingRenumbered', { upcasters: { 1: (data: { i: number }) => ({ n: data.i }) }, validate: (data) => z.strictObject({ n: z.int() }).parse(data) });
  registerEventType('ThingBroken', { upcasters: { 1: (data: { i: number }) => ({ m: data.i }) }, validate: (data) => z.strictObject({ n: z.int() }).parse(data) });
  const data = (type: string, i: number) => (type === 'ThingNamed' ? { n: i } : { i });

  beforeAll(() => resetLog(handle.db));

  it('on the data upcast to the current schema, as the index functions read it', async () => {
    await append(handle.db, 'thing-1', ['ThingNamed', 'ThingRenumbered', 'ThingNamed'], data);
    const report = await verifyLog(handle.db, { feedIndex });
    expect(report).toMatchObject({ ok: true, eventsChecked: 3, indexesChecked: 3, problems: [] });
  });

  it('reports an event whose type it does not know, or whose data cannot be upcast, as unchecked', async () => {
    const [planted] = await append(handle.db, 'thing-2', ['Planted']);
    const [, broken] = await append(handle.db, 'thing-3', ['ThingNamed', 'ThingBroken'], data);
    const report = await verifyLog(handle.db, { feedIndex });
    expect(report).toMatchObject({ ok: false, eventsChecked: 6, indexesChecked: 4 });
    expect(report.problems).toEqual([
      {
        kind: 'index_unchecked',
        streamId: 'thing-2',
        position: planted!.globalPosition,
        detail: `version 1 (Planted, ${planted!.eventId}): no aggregate defines Planted, so its feed index cannot be recomputed`,
      },
      {
        kind: 'index_unchecked',
        streamId: 'thing-3',
        position: broken!.globalPosition,
        detail: `version 2 (ThingBroken, ${broken!.eventId}): its feed index cannot be recomputed (ThingBroken upcast from schema version 1 to 2 does not match its schema)`,
      },
    ]);
  });

  it('reports each altered column once, and a column altered with its metadata only as the hash', async () => {
    const event = await handle.db.selectFrom('events').selectAll().where('stream_id', '=', 'thing-1').where('stream_version', '=', 2).executeTakeFirstOrThrow();
    await tamper(handle.db, (trx) => sql`update events set actor_id = 5, target_id = 9 where global_position = ${event.global_position}`.execute(trx));
    const twoColumns = await verifyLog(handle.db, { feedIndex });
    expect(twoColumns.problems.filter((p) => p.streamId === 'thing-1').map((p) => [p.kind, p.column, p.stored, p.recomputed])).toEqual([
      ['index_mismatch', 'actor_id', 5, 1],
      ['index_mismatch', 'target_id', 9, 1],
    ]);
    // The actor moved in the metadata too: the columns agree with it, the hash does not.
    await tamper(handle.db, (trx) => sql`update events set metadata = metadata || '{"actor_id":5}', target_id = 1 where global_position = ${event.global_position}`.execute(trx));
    const withMetadata = await verifyLog(handle.db, { feedIndex });
    expect(withMetadata.problems.filter((p) => p.streamId === 'thing-1').map((p) => p.kind)).toEqual(['hash_mismatch']);
  });
});
