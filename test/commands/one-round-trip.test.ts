import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/handler.js';
import { PreconditionFailed } from '../../src/commands/precondition.js';
import { StreamStateCache } from '../../src/commands/stream-cache.js';
import type { DatabaseHandle } from '../../src/database.js';
import { readStream } from '../../src/eventstore/store.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import type { Projector } from '../../src/projections/projector.js';
import { describeOnPostgres, openTestDatabase } from '../support/database.js';
import { commandContext, count, counterProjector, createCounterTable, ignore } from '../projections/fixtures.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
  await createCounterTable(handle.db);
  // A projection that refuses totals of 1000 or more: a way to make a batch fail after its INSERT.
  await sql`alter table test_counts add constraint test_counts_small check (total < 1000)`.execute(handle.db);
});
afterAll(() => handle.close());

const writesOnly: Projector = { ...counterProjector({ mode: 'inline', batch: false }), writesOnly: true };

/** A context whose batches are counted. */
function context(projectors: readonly Projector[] = [writesOnly]) {
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

  it('is not used when a projector of the events reads what it writes, nor for outcomes that append nothing', async () => {
    const reading = context([counterProjector({ mode: 'inline', batch: false })]);
    await count(reading.ctx, 'rt-4', 1);
    await count(reading.ctx, 'rt-4', 1);
    expect(reading.sent.batches).toBe(0);
    const { ctx, sent } = context();
    await count(ctx, 'rt-5', 1);
    await ignore(ctx, 'rt-5');
    expect(sent.batches).toBe(1); // `Ignored` has no projector: the batch holds the INSERT alone
    expect((await readStream(handle.db, 'rt-5')).map((e) => e.type)).toEqual(['Counted', 'Ignored']);
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
