import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { handleCommand, handleCommands } from '../../src/commands/kernel/handler.js';
import { spec } from '../../src/commands/kernel/run.js';
import { defineAggregate } from '../../src/domain/aggregate.js';
import type { Decider } from '../../src/domain/decider.js';
import type { EventOf } from '../../src/domain/events.js';
import { PreconditionFailed } from '../../src/commands/kernel/precondition.js';
import { recordProjections, UnrecordableProjection } from '../../src/commands/kernel/record-projections.js';
import { StreamStateCache } from '../../src/commands/kernel/stream-cache.js';
import type { DatabaseHandle, Db } from '../../src/database/database.js';
import { readStream } from '../../src/eventstore/store.js';
import type { LoggedEvent, ProjectedEvent } from '../../src/eventstore/types.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { precompiled, type Slot } from '../../src/precompiled.js';
import type { Projector } from '../../src/projections/projector.js';
import { inlineProjectors } from '../../src/projections/registry.js';
import { describeOnPostgres, openTestDatabase } from '../support/database.js';
import { commandContext, count, counterProjector, counters, createCounterTable, handWritten, ignore } from '../projections/fixtures.js';
import type { CommandContext } from '../../src/commands/kernel/context.js';
import { IN_TRANSACTION_BATCH } from '../../src/database/pg-client.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
  await createCounterTable(handle.db);
  // A projection that refuses totals of 1000 or more: a way to make a batch fail after its INSERT.
  await sql`alter table test_counts add constraint test_counts_small check (total < 1000)`.execute(handle.db);
});
afterAll(() => handle.close());

/** Upserts guarded by the stream version: reads no result, so its statements go with the append. */
const writing: Projector = counterProjector({ mode: 'inline', batch: false });

/**
 * The same rows, but read, added to and written back: a projector that acts on a result. A
 * recorder answering `rows: []` would make it write each amount alone, in silence.
 */
function readingProjector() {
  const applied = { times: 0 };
  const projector = handWritten({
    ...writing,
    name: 'reading counts',
    async apply(event, trx) {
      applied.times++;
      const { rows } = await sql<{ events: number; total: string }>`select events, total from test_counts where stream_id = ${event.streamId}`.execute(trx);
      const before = rows[0] ?? { events: 0, total: '0' };
      await sql`
        insert into test_counts (stream_id, events, total, last_version)
        values (${event.streamId}, ${before.events + 1}, ${Number(before.total) + (event.data as { amount: number }).amount}, ${event.streamVersion})
        on conflict (stream_id) do update set events = excluded.events, total = excluded.total, last_version = excluded.last_version
        where test_counts.last_version < excluded.last_version`.execute(trx);
    },
  });
  return { projector, applied };
}

/** A context whose batches are counted. */
function context(projectors: readonly Projector[] = [writing]) {
  const base = commandContext(handle, projectors);
  const sent = { batches: 0 };
  const ctx: CommandContext = {
    ...base,
    streamCache: new StreamStateCache(),
    ...(base.oneRoundTrip ? { oneRoundTrip: (statements) => (sent.batches++, base.oneRoundTrip!(statements)) } : {}),
  };
  return { ctx, sent };
}

const totalOf = async (streamId: string) =>
  (await sql<{ total: string }>`select total from test_counts where stream_id = ${streamId}`.execute(handle.db)).rows[0]?.total;

describeOnPostgres('a command in one round trip', () => {
  it('appends and projects in one batch once the stream is cached, and the log stays verifiable', async () => {
    const { ctx, sent } = context();
    await count(ctx, 'rt-1', 1); // not cached yet: the ordinary transaction
    expect(sent.batches).toBe(0);
    const second = await count(ctx, 'rt-1', 2);
    const third = await count(ctx, 'rt-1', 3);
    expect(sent.batches).toBe(2);
    expect([second.version, third.version]).toEqual([2, 3]);
    expect(third.events[0]).toMatchObject({ streamId: 'rt-1', streamVersion: 3, type: 'Counted' });
    expect(BigInt(third.events[0]!.globalPosition)).toBeGreaterThan(BigInt(second.events[0]!.globalPosition));
    expect(await totalOf('rt-1')).toBe('6');
    const stream = await readStream(handle.db, 'rt-1');
    expect(stream.map((e) => e.hash)).toEqual([stream[0]!.hash, second.events[0]!.hash, third.events[0]!.hash]);
    const report = await verifyLog(handle.db);
    expect(report.problems).toEqual([]);
  });

  it('commits nothing when a projection statement fails after the INSERT', async () => {
    const { ctx, sent } = context();
    await count(ctx, 'rt-2', 1);
    await expect(count(ctx, 'rt-2', 5000)).rejects.toMatchObject({ code: '23514' });
    expect(sent.batches).toBe(1);
    expect((await readStream(handle.db, 'rt-2')).map((e) => e.streamVersion)).toEqual([1]);
    expect(await totalOf('rt-2')).toBe('1');
    // The connection was rolled back and the cache is still right.
    expect((await count(ctx, 'rt-2', 2)).version).toBe(2);
    expect(await totalOf('rt-2')).toBe('3');
  });

  it('falls back to reading the stream when another process appended to it', async () => {
    const a = context();
    const b = context();
    await count(a.ctx, 'rt-3', 1);
    await count(b.ctx, 'rt-3', 10); // b reads the stream: its cache was empty
    const result = await count(a.ctx, 'rt-3', 100); // a's cached version is behind: the batch conflicts
    expect(result).toMatchObject({ version: 3, state: { total: 111 } });
    expect(a.sent.batches).toBe(1);
    expect((await readStream(handle.db, 'rt-3')).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
    expect(await totalOf('rt-3')).toBe('111');
  });

  it('is not used when a projector of the events reads what a statement returns, nor for outcomes that append nothing', async () => {
    const { projector, applied } = readingProjector();
    const reading = context([projector]);
    await count(reading.ctx, 'rt-4', 1); // recorded, found reading, then run for real
    expect(applied.times).toBe(2);
    await count(reading.ctx, 'rt-4', 2); // recorded for the one round trip and again in the transaction, then run for real
    expect(applied.times).toBe(5);
    expect(reading.sent.batches).toBe(0);
    expect(await totalOf('rt-4')).toBe('3');
    const { ctx, sent } = context();
    await count(ctx, 'rt-5', 1);
    await ignore(ctx, 'rt-5');
    expect(sent.batches).toBe(1); // `Ignored` has no projector: the batch holds the INSERT alone
    expect((await readStream(handle.db, 'rt-5')).map((e) => e.type)).toEqual(['Counted', 'Ignored']);
  });
});

describeOnPostgres('a projector that reads a result for some events only', () => {
  /** Reads the row before writing when the amount is odd (as the cross-references projector reads only for a text that references something). */
  const sometimesReading = handWritten({
    ...writing,
    name: 'reading odd counts',
    async apply(event, trx) {
      const { amount } = event.data as { amount: number };
      if (amount % 2 === 1) void (await sql`select total from test_counts where stream_id = ${event.streamId}`.execute(trx)).rows[0];
      await writing.apply(event, trx);
    },
  });

  it('sends an event it does not read for in one round trip after one it read for', async () => {
    const { ctx, sent } = context([sometimesReading]);
    await count(ctx, 'rs-1', 2); // not cached: the ordinary transaction
    await count(ctx, 'rs-1', 1); // read for: the ordinary transaction
    expect(sent.batches).toBe(0);
    await count(ctx, 'rs-1', 4);
    await count(ctx, 'rs-1', 3);
    await count(ctx, 'rs-1', 6);
    expect(sent.batches).toBe(2);
    expect(await totalOf('rs-1')).toBe('16');
    expect((await readStream(handle.db, 'rs-1')).map((e) => (e.data as { amount: number }).amount)).toEqual([2, 1, 4, 3, 6]);
  });
});

// A name per stream, held as a claim: what the batch takes by a statement that fails when refused.
const nameEvents = { Named: z.object({ name: z.string() }) };
const namedDecider: Decider<{ readonly type: 'Name'; readonly name: string }, EventOf<typeof nameEvents>, { name: string | null }, string> = {
  initialState: () => ({ name: null }),
  evolve: (_, event) => ({ name: event.data.name }),
  decide: (command, state) => (command.name === state.name ? [] : [{ type: 'Named', data: { name: command.name } }]),
};
const named = defineAggregate({
  name: 'named',
  streamId: (id: string) => id,
  events: nameEvents,
  decider: namedDecider,
  claims: (event, before) => ({
    acquire: [{ kind: 'test-name', key: event.data.name, conflictMessage: 'Name has already been taken' }],
    release: before.name === null ? [] : [{ kind: 'test-name', key: before.name }],
  }),
});
const writer = (ctx: CommandContext) => ({ ctx, metadata: { actor_id: 1 } });
const claimHolder = async (key: string) =>
  (await sql<{ stream_id: string }>`select stream_id from claims where kind = 'test-name' and key = ${key}`.execute(handle.db)).rows[0]?.stream_id;

/** Counts the statement batches sent inside transactions on the pool's connections (attachTransactionBatches). */
function countTransactionBatches() {
  const seen = { batches: 0 };
  const wrapped = new WeakSet<object>();
  const onAcquire = (client: { query: (...args: unknown[]) => unknown }) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client);
    client.query = (...args: unknown[]) => {
      if (args[0] === IN_TRANSACTION_BATCH) seen.batches++;
      return query(...args);
    };
  };
  handle.pool!.on('acquire', onAcquire as never);
  return { seen, stop: () => handle.pool!.off('acquire', onAcquire as never) };
}

describeOnPostgres('the ordinary transaction', () => {
  it('sends the append and the projections that read no result as one batch, and the log stays verifiable', async () => {
    const { ctx, sent } = context();
    const counting = countTransactionBatches();
    try {
      // Not cached: decided in a transaction that reads the stream, then the INSERT and the projection in one batch.
      const first = await count(ctx, 'ot-1', 4);
      expect(sent.batches).toBe(0);
      expect(counting.seen.batches).toBe(1);
      expect(first).toMatchObject({ version: 1, state: { total: 4 } });
      expect(first.events[0]).toMatchObject({ streamId: 'ot-1', streamVersion: 1, type: 'Counted' });
      expect(first.events[0]!.globalPosition).toMatch(/^\d+$/);
    } finally {
      counting.stop();
    }
    expect(await totalOf('ot-1')).toBe('4');
    expect((await readStream(handle.db, 'ot-1')).map((e) => e.hash)).toEqual([(await readStream(handle.db, 'ot-1'))[0]!.hash]);
    expect((await verifyLog(handle.db)).problems).toEqual([]);
  });

  it('commits nothing when a projection statement of the batch fails after the INSERT', async () => {
    const { ctx } = context();
    await expect(count(ctx, 'ot-2', 5000)).rejects.toMatchObject({ code: '23514' });
    expect(await readStream(handle.db, 'ot-2')).toEqual([]);
    expect(await totalOf('ot-2')).toBeUndefined();
    // The connections were rolled back: the next command on the stream is its first.
    expect((await count(context().ctx, 'ot-2', 2)).version).toBe(1);
    expect(await totalOf('ot-2')).toBe('2');
  });

  it('runs a projector that reads what its statements return statement by statement, as before', async () => {
    const { projector, applied } = readingProjector();
    const { ctx } = context([projector]);
    await count(ctx, 'ot-3', 5);
    expect(await totalOf('ot-3')).toBe('5');
    // Found reading a result while it was recorded, it is run for real; a new context's first command on the stream is recorded in its transaction once, then run.
    const before = applied.times;
    await count(context([projector]).ctx, 'ot-3', 6);
    expect(applied.times).toBe(before + 2);
    expect(await totalOf('ot-3')).toBe('11');
  });
});

describeOnPostgres('claims in the ordinary transaction', () => {
  it('are taken in the batch of the append, and one another stream holds is answered as before, having written nothing', async () => {
    const counting = countTransactionBatches();
    try {
      // Not new, not cached: the ordinary transaction, its claim, INSERT and projections in one batch.
      await handleCommand(writer(context().ctx), spec(named, 'oc-1', { type: 'Name', name: 'delta' }));
      expect(counting.seen.batches).toBe(1);
      expect(await claimHolder('delta')).toBe('oc-1');
      // The claim's statement fails the batch; the transaction runs again taking claims one by one, and is refused before its append.
      const refused = handleCommand(writer(context().ctx), spec(named, 'oc-2', { type: 'Name', name: 'delta' }));
      await expect(refused).rejects.toMatchObject({ code: 'conflict', text: 'Name has already been taken' });
      expect(counting.seen.batches).toBe(2);
    } finally {
      counting.stop();
    }
    expect(await readStream(handle.db, 'oc-2')).toEqual([]);
    expect(await claimHolder('delta')).toBe('oc-1');
    expect((await verifyLog(handle.db)).problems).toEqual([]);
  });
});

describeOnPostgres('several commands in one round trip', () => {
  it('commit together in one batch, claims and new streams included, in the order given', async () => {
    const { ctx, sent } = context();
    const [a, b] = await handleCommands(writer(ctx), [
      spec(named, 'nm-1', { type: 'Name', name: 'alpha' }, { newStream: true }),
      spec(counters, 'nm-1-count', { type: 'Count', amount: 4 }, { newStream: true }),
    ]);
    expect(sent.batches).toBe(1);
    expect([a!.version, b!.version]).toEqual([1, 1]);
    expect(BigInt(b!.events[0]!.globalPosition)).toBeGreaterThan(BigInt(a!.events[0]!.globalPosition));
    expect(await claimHolder('alpha')).toBe('nm-1');
    expect(await totalOf('nm-1-count')).toBe('4');
    // A rename gives the old name back and takes the new one, still in one batch.
    await handleCommand(writer(ctx), spec(named, 'nm-1', { type: 'Name', name: 'beta' }));
    expect(sent.batches).toBe(2);
    expect([await claimHolder('alpha'), await claimHolder('beta')]).toEqual([undefined, 'nm-1']);
    expect((await verifyLog(handle.db)).problems).toEqual([]);
  });

  it('answer a claim another stream holds as the ordinary path does, having written nothing', async () => {
    const { ctx, sent } = context();
    await handleCommand(writer(ctx), spec(named, 'nm-2', { type: 'Name', name: 'gamma' }));
    const refused = handleCommands(writer(ctx), [
      spec(counters, 'nm-3-count', { type: 'Count', amount: 1 }, { newStream: true }),
      spec(named, 'nm-3', { type: 'Name', name: 'gamma' }, { newStream: true }),
    ]);
    await expect(refused).rejects.toMatchObject({ code: 'conflict', text: 'Name has already been taken' });
    expect(sent.batches).toBe(1); // tried, refused by the claim's statement, decided again in a transaction
    expect(await readStream(handle.db, 'nm-3-count')).toEqual([]);
    expect(await totalOf('nm-3-count')).toBeUndefined();
    expect(await claimHolder('gamma')).toBe('nm-2');
  });

  it('read the stream when a new stream was not new after all', async () => {
    const { ctx, sent } = context();
    await count(context().ctx, 'nm-4', 5); // by another process: this one's cache has not seen it
    const result = await handleCommand(writer(ctx), spec(counters, 'nm-4', { type: 'Count', amount: 1 }, { newStream: true }));
    expect(sent.batches).toBe(1);
    expect(result).toMatchObject({ version: 2, state: { total: 6 } });
    expect(await totalOf('nm-4')).toBe('6');
  });

  it('decide an optimistic command in the batch while its rows hold, and build it in the transaction when they do not', async () => {
    const { ctx, sent } = context();
    await sql`create table if not exists test_facts (id int primary key, amount int not null)`.execute(handle.db);
    await sql`insert into test_facts values (1, 7) on conflict (id) do update set amount = 7`.execute(handle.db);
    const unchanged = (amount: number) => sql`select 1 / (select count(*) from (select 1 from test_facts where id = 1 and amount = ${amount} for share) f)::int`.compile(handle.db);
    const built = { times: 0 };
    const inTransaction = async (trx: Db) => {
      built.times++;
      const { rows } = await sql<{ amount: number }>`select amount from test_facts where id = 1 for share`.execute(trx);
      return { type: 'Count' as const, amount: rows[0]!.amount };
    };
    const first = await handleCommand(writer(ctx), spec(counters, 'nm-5', inTransaction, { newStream: true, optimistic: { command: { type: 'Count', amount: 7 }, unchanged: unchanged(7) } }));
    expect([sent.batches, built.times, first.state.total]).toEqual([1, 0, 7]);
    // Read as 7, changed to 9 before the command: the batch finds out, the transaction decides on 9.
    await sql`update test_facts set amount = 9 where id = 1`.execute(handle.db);
    const second = await handleCommand(writer(ctx), spec(counters, 'nm-5', inTransaction, { optimistic: { command: { type: 'Count', amount: 7 }, unchanged: unchanged(7) } }));
    expect([sent.batches, built.times, second.state.total]).toEqual([2, 1, 16]);
    expect((await readStream(handle.db, 'nm-5')).map((e) => e.data)).toEqual([{ amount: 7 }, { amount: 9 }]);
    expect(await totalOf('nm-5')).toBe('16');
  });
});

describe('a command precondition', () => {
  it('is checked first in the transaction, cached stream or not', async () => {
    const { ctx } = context();
    let held = 0;
    const guarded: CommandContext = { ...ctx, precondition: { statement: sql`select 1 / 1 as held`.compile(handle.db), held: () => held++ } };
    await count(guarded, 'pc-1', 1);
    await count(guarded, 'pc-1', 2);
    expect(held).toBe(2);
    expect(await totalOf('pc-1')).toBe('3');
  });

  it('fails the command with PreconditionFailed and writes nothing when it does not hold', async () => {
    const { ctx } = context();
    await count(ctx, 'pc-2', 1); // cached from here: the next attempt would go in one batch on PostgreSQL
    let held = 0;
    const failing: CommandContext = { ...ctx, precondition: { statement: sql`select 1 / 0 as held`.compile(handle.db), held: () => held++ } };
    await expect(count(failing, 'pc-2', 5)).rejects.toBeInstanceOf(PreconditionFailed);
    await expect(count({ ...failing, streamCache: new StreamStateCache() }, 'pc-2', 5)).rejects.toBeInstanceOf(PreconditionFailed);
    expect(held).toBe(0);
    expect((await readStream(handle.db, 'pc-2')).map((e) => e.streamVersion)).toEqual([1]);
    expect(await totalOf('pc-2')).toBe('1');
  });
});

// ───────────────────────────── Recording ─────────────────────────────

const counted: ProjectedEvent = { streamId: 'rec-1', streamVersion: 4, eventId: '018f0000-0000-7000-8000-000000000000', type: 'Counted', schemaVersion: 1, data: { amount: 2 }, occurredAt: new Date() };
type Probe = (trx: Db, k: Kysely<any>, event: ProjectedEvent) => Promise<unknown>;
const probe = (apply: Probe): Projector => handWritten({ ...writing, name: 'probe', apply: async (event, trx) => void (await apply(trx, trx as unknown as Kysely<any>, event)) });
const removeCount = precompiled((db: Kysely<any>, id: Slot<string>) => db.deleteFrom('test_counts').where('stream_id', '=', id));

describe('recorded projections', () => {
  it('are the statements a projector sends, in order, when it reads none of their results', async () => {
    const recorded = await recordProjections(
      [
        probe(async (trx, k) => {
          await sql`update test_counts set total = total + ${1} where stream_id = ${'a'}`.execute(trx);
          await k.updateTable('test_counts').set({ events: 0 }).where('stream_id', '=', 'b').execute();
          await k.deleteFrom('test_counts').where('stream_id', '=', 'c').executeTakeFirst();
          await trx.executeQuery(sql`delete from test_counts where stream_id = ${'d'}`.compile(trx));
          await removeCount.send(k, 'e');
        }),
      ],
      [counted],
    );
    if (recorded instanceof UnrecordableProjection) throw recorded;
    expect(recorded.map((q) => [q.sql, q.parameters])).toEqual([
      ['update test_counts set total = total + $1 where stream_id = $2', [1, 'a']],
      ['update "test_counts" set "events" = $1 where "stream_id" = $2', [0, 'b']],
      ['delete from "test_counts" where "stream_id" = $1', ['c']],
      ['delete from test_counts where stream_id = $1', ['d']],
      ['delete from "test_counts" where "stream_id" = $1', ['e']],
    ]);
  });

  it("hold every statement of the inline projections of a user's status, state, tokens and attributes (these writes go in one round trip)", async () => {
    const events: [string, object][] = [
      ['UserStatusSet', { emoji: 'coffee', message: 'busy', message_html: 'busy' }],
      ['UserStatusCleared', {}],
      ['UserBlocked', {}],
      ['UserUnblocked', {}],
      ['PersonalAccessTokenRevoked', { id: 12, user_id: 7 }],
      ['UserCustomAttributeSet', { key: 'k', value: 'v' }],
      ['UserCustomAttributeDeleted', { key: 'k' }],
    ];
    for (const [type, data] of events) {
      const event = { ...counted, streamId: 'user-7', type, data: { id: 7, ...data } };
      const recorded = await recordProjections(inlineProjectors(), [event]);
      if (recorded instanceof UnrecordableProjection) throw recorded;
      expect(recorded.length, type).toBeGreaterThan(0);
    }
  });

  // Each way a projector could act on a result a recorded statement does not have yet.
  const reads: [string, Probe, RegExp][] = [
    ['the rows of a raw statement', async (trx) => (await sql`update test_counts set total = 0`.execute(trx)).rows, /read `rows` of a recorded statement \(update test_counts set total = 0\)/],
    ['the count of a raw statement', async (trx) => (await sql`delete from test_counts`.execute(trx)).numAffectedRows, /read `numAffectedRows` of a recorded statement \(delete from test_counts\)/],
    ['the insert id of a compiled statement', async (trx) => (await trx.executeQuery(sql`insert into test_counts default values`.compile(trx))).insertId, /read `insertId`/],
    [
      'the count of an update, tested for truth',
      async (_, k) => {
        if ((await k.updateTable('test_counts').set({ total: 0 }).where('stream_id', '=', 'x').executeTakeFirst()).numUpdatedRows) return;
      },
      /read `numUpdatedRows` of a recorded statement \(update "test_counts" set "total" = \$1 where "stream_id" = \$2\)/,
    ],
    ['the count of a delete, as a number', async (_, k) => Number((await k.deleteFrom('test_counts').execute())[0]!.numDeletedRows), /read `numDeletedRows`/],
    ['a select', async (_, k) => k.selectFrom('test_counts').select('total').execute(), /ran a query whose rows are read \(select "total" from "test_counts"\)/],
    ['a returning', async (_, k) => k.insertInto('test_counts').values({ stream_id: 'x' }).returning('total').executeTakeFirst(), /ran a query whose rows are read \(insert into .* returning "total"\)/],
    ['the rows of a precompiled statement', async (_, k) => removeCount.execute(k, 'x'), /read `rows` of a recorded statement \(delete from "test_counts"/],
    ['the event’s place in the log', async (_, __, event) => (event as LoggedEvent).globalPosition, /read the event’s position in the log/],
    ['a transaction of its own', async (trx) => trx.transaction().execute(async () => {}), /opened a transaction/],
    [
      'streamed rows',
      async (_, k) => {
        for await (const row of k.updateTable('test_counts').set({ total: 0 }).stream()) return row;
      },
      /streamed rows/,
    ],
    [
      'a result, catching the error',
      async (trx) => {
        try {
          return (await sql`select 1`.execute(trx)).rows;
        } catch {
          return [];
        }
      },
      /read `rows` of a recorded statement \(select 1\)/,
    ],
  ];
  it.each(reads)('fail loudly, naming the projector, the event and the statement, when a projector reads %s', async (_, read, message) => {
    const recorded = await recordProjections([writing, probe(read)], [counted]);
    expect(recorded).toBeInstanceOf(UnrecordableProjection);
    expect((recorded as UnrecordableProjection).message).toMatch(/^the probe projector, applying Counted, /);
    expect((recorded as UnrecordableProjection).message).toMatch(message);
    expect(recorded).toMatchObject({ projector: { name: 'probe' }, eventType: 'Counted' });
  });
});
