import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAggregate } from '../../src/domain/aggregate.js';
import { StreamStateCache } from '../../src/commands/kernel/stream-cache.js';
import type { DatabaseHandle } from '../../src/database/database.js';
import type { Decider } from '../../src/domain/decider.js';
import type { EventOf } from '../../src/domain/events.js';
import { conflict } from '../../src/domain/errors.js';
import { readStream } from '../../src/eventstore/store.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { openTestDatabase } from '../support/database.js';
import { commandContext, count, counterDecider } from '../projections/fixtures.js';
import { run } from '../../src/commands/kernel/run.js';
import type { CommandContext } from '../../src/commands/kernel/context.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

describe('folded stream cache', () => {
  it('keeps states consistent when another process (another cache) appends in between', async () => {
    const a = { ...commandContext(handle), streamCache: new StreamStateCache() };
    const b = { ...commandContext(handle), streamCache: new StreamStateCache() };
    expect((await count(a, 'c-1', 1)).state.total).toBe(1);
    expect((await count(a, 'c-1', 2)).state.total).toBe(3);
    expect(a.streamCache.get(counterDecider, 'c-1')).toMatchObject({ version: 2, state: { total: 3 } });
    // b has never seen the stream; a's cache is now behind b's append.
    expect((await count(b, 'c-1', 10)).state.total).toBe(13);
    const result = await count(a, 'c-1', 100);
    expect(result.state.total).toBe(113);
    expect(result.version).toBe(4);
    const stream = await readStream(handle.db, 'c-1');
    expect(stream.map((e) => e.streamVersion)).toEqual([1, 2, 3, 4]);
    // The hash chain continued from the right head, whoever appended it.
    const report = await verifyLog(handle.db);
    expect(report.problems.filter((p) => p.kind === 'hash_mismatch' || p.kind === 'version_gap')).toEqual([]);
  });

  // A first attempt on a cached fold decides without reading the stream; an outcome that
  // appends nothing must still be checked against what another process appended meanwhile.
  type Gauge = { type: 'Set'; to: number } | { type: 'Take'; amount: number };
  const gaugeEvents = { GaugeSet: z.object({ to: z.number() }), Taken: z.object({ amount: z.number() }) };
  type GaugeEvent = EventOf<typeof gaugeEvents>;
  const gaugeDecider: Decider<Gauge, GaugeEvent, { value: number }> = {
    initialState: () => ({ value: 0 }),
    evolve: (state, event) => ({ value: event.type === 'GaugeSet' ? event.data.to : state.value - event.data.amount }),
    decide: (command, state) => {
      if (command.type === 'Set') return state.value === command.to ? [] : [{ type: 'GaugeSet', data: { to: command.to } }];
      if (state.value < command.amount) throw conflict('not enough');
      return [{ type: 'Taken', data: { amount: command.amount } }];
    },
  };
  const gauges = defineAggregate({ name: 'gauges', streamId: () => 'gauge-1', events: gaugeEvents, decider: gaugeDecider });
  const gauge = (ctx: CommandContext, command: Gauge) => run({ ctx, metadata: { actor_id: 1 } }, gauges, undefined, command);

  it('re-decides a no-change or a refusal made on a cached state another process moved past', async () => {
    const a = { ...commandContext(handle), streamCache: new StreamStateCache() };
    const b = { ...commandContext(handle), streamCache: new StreamStateCache() };
    await gauge(a, { type: 'Set', to: 5 });
    await gauge(b, { type: 'Set', to: 7 });
    // a's cache still says 5: setting 5 is a change after all.
    const set = await gauge(a, { type: 'Set', to: 5 });
    expect(set).toMatchObject({ version: 3, state: { value: 5 } });
    expect(set.events.map((e) => e.type)).toEqual(['GaugeSet']);

    await gauge(b, { type: 'Set', to: 100 });
    // a's cache says 5, too little to take 50; the log says 100.
    const taken = await gauge(a, { type: 'Take', amount: 50 });
    expect(taken).toMatchObject({ version: 5, state: { value: 50 } });
    // A no-change and a refusal on a current cache stay what they are.
    expect((await gauge(a, { type: 'Set', to: 50 })).events).toEqual([]);
    await expect(gauge(a, { type: 'Take', amount: 51 })).rejects.toThrow('not enough');
    expect((await readStream(handle.db, 'gauge-1')).map((e) => e.type)).toEqual(['GaugeSet', 'GaugeSet', 'GaugeSet', 'GaugeSet', 'Taken']);
  });

  it("reads only what another process appended after its cached fold, when that process's appends make it decide again", async () => {
    const folded = { events: 0 };
    const tallies = defineAggregate({
      name: 'tallies',
      streamId: (id: string) => id,
      events: { Tallied: z.object({ amount: z.number() }) },
      decider: {
        initialState: () => ({ total: 0 }),
        evolve: (state: { total: number }, event: { type: 'Tallied'; data: { amount: number } }) => (folded.events++, { total: state.total + event.data.amount }),
        decide: (command: { amount: number }) => [{ type: 'Tallied' as const, data: { amount: command.amount } }],
      },
    });
    const tally = (ctx: CommandContext, amount: number) => run({ ctx, metadata: { actor_id: 1 } }, tallies, 'tally-1', { amount });
    const a = { ...commandContext(handle), streamCache: new StreamStateCache() };
    const b = { ...commandContext(handle), streamCache: new StreamStateCache() };
    for (let i = 0; i < 5; i++) await tally(a, 1); // a's cache: version 5
    await tally(b, 10); // b reads the five and appends the sixth
    folded.events = 0;
    const result = await tally(a, 100); // a's append conflicts: a reads the sixth, not the first five again
    expect(result).toMatchObject({ version: 7, state: { total: 115 } });
    expect(folded.events).toBe(2); // the sixth event, read, and its own (reading the stream from its start folded seven)
  });

  it('evicts the oldest streams beyond its capacity', () => {
    const cache = new StreamStateCache(2);
    for (const id of ['x', 'y', 'z']) cache.set(counterDecider, id, { version: 1, state: { total: 1 }, hash: 'h' });
    expect(cache.get(counterDecider, 'x')).toBeUndefined();
    expect(cache.get(counterDecider, 'z')).toMatchObject({ version: 1 });
  });
});
