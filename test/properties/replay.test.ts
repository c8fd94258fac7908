import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { ProjectionWorker } from '../../src/worker/runner.js';
import { openTestDatabase } from '../support/database.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { commandContext, count, counterProjector, createCounterTable, ignore } from '../projections/fixtures.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
  await createCounterTable(handle.db, 'inline_counts');
  await createCounterTable(handle.db, 'async_counts');
});
afterAll(() => handle.close());

const inline = counterProjector({ name: 'inline-counts', table: 'inline_counts', mode: 'inline' });
// One by one, so the rebuild's batch path is checked against the per-event path.
const async_ = counterProjector({ name: 'async-counts', table: 'async_counts', batch: false });

describe('replay equivalence', () => {
  it('rebuilding from the log yields the rows the inline path and the async worker produced', async () => {
    const command = fc.record({ stream: fc.nat(5), ignored: fc.boolean(), amount: fc.integer({ min: -100, max: 100 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 10 }), async (commands, batchSize) => {
        const ctx = commandContext(handle, [inline]);
        await Promise.all(commands.map((c) => (c.ignored ? ignore(ctx, `s${c.stream}`) : count(ctx, `s${c.stream}`, c.amount))));
        const worker = new ProjectionWorker(handle, { projectors: [async_], batchSize });
        try {
          await worker.catchUp();
        } finally {
          await worker.stop();
        }
        await expectReplayEquivalence(handle, [inline, async_]);
      }),
      { numRuns: 6, endOnFailure: true },
    );
  });
});
