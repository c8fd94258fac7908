/**
 * A seeding process of the group-list scenarios (forked by seedGroups in bench/groups.ts):
 * rebuilds the same forest from the same options and first ids, then runs its share of
 * each step it is told to, on its own pool, and reports the events it appended.
 */
import { installEventTypes } from '../src/commands/kernel/aggregates.js';
import { openDatabase, type DatabaseHandle } from '../src/database/database.js';
import { planForest, runSeedStep, type Forest, type SeedWorkerMessage, type SeedWorkerReply } from './groups.js';

let handle: DatabaseHandle | undefined;
let forest: Forest | undefined;
let share = { worker: 0, workers: 1, parallel: 1 };

const reply = (message: SeedWorkerReply) => process.send!(message);

process.on('message', (message: SeedWorkerMessage) => {
  (async () => {
    if (message.type === 'init') {
      share = { worker: message.worker, workers: message.workers, parallel: message.parallel };
      installEventTypes();
      handle = await openDatabase({ databaseUrl: message.url, poolSize: message.parallel });
      forest = planForest(message.options, message.firstGroupId, message.firstProjectId);
      reply({ type: 'ready' });
      return;
    }
    const result = await runSeedStep(handle!.db, forest!, message.step, share);
    const cpu = process.cpuUsage();
    reply({ type: 'done', ...result, cpuMicros: cpu.user + cpu.system });
  })().catch((error: unknown) => reply({ type: 'error', error: String((error as Error)?.stack ?? error) }));
});
process.on('disconnect', () => {
  void handle?.close().finally(() => process.exit(0));
});
