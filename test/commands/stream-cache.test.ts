import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamStateCache } from '../../src/commands/stream-cache.js';
import type { DatabaseHandle } from '../../src/database.js';
import { readStream } from '../../src/eventstore/store.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { openTestDatabase } from '../support/database.js';
import { commandContext, count, counterDecider } from '../projections/fixtures.js';

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

  it('evicts the oldest streams beyond its capacity', () => {
    const cache = new StreamStateCache(2);
    for (const id of ['x', 'y', 'z']) cache.set(counterDecider, id, { version: 1, state: { total: 1 }, hash: 'h' });
    expect(cache.get(counterDecider, 'x')).toBeUndefined();
    expect(cache.get(counterDecider, 'z')).toMatchObject({ version: 1 });
  });
});
