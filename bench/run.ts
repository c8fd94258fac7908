/**
 * `npm run bench` (bench/README.md): the black-box phase — forgelog as its own process, started
 * as `npm start` starts it, against a bare hono + pg server, with autocannon in a third — and
 * the in-process phase that explains it (statements and CPU per request); deep-dive phases on
 * request (BENCH_ONLY). Prints every figure beside its target and exits non-zero when a target
 * is missed.
 */
import { measureAppends } from './appends.js';
import { measureAsOf } from './as-of.js';
import { measureBlackbox, type BlackboxFigures } from './blackbox/measure.js';
import { measureExplain, type ExplainFigure } from './blackbox/explain.js';
import { measureFeeds } from './feeds.js';
import { measureImportVerify } from './verify.js';
import { measureLogTree } from './log-tree.js';
import { startApp } from './harness/app.js';
import { LoadGenerator } from './harness/load-generator.js';
import { log, round, rssAfter, sampleRss } from './harness/meters.js';
import { createDatabase, type Cleanups } from './harness/setup.js';
import { SERVER_URL } from './harness/settings.js';
import { measureMemory } from './memory.js';
import { measureMergeRequestLists } from './merge-requests.js';
import { measureRebuild } from './rebuild.js';
import { measureRepository } from './repository.js';
import { report, type Figures } from './report.js';

const DEFAULT_PHASES = ['blackbox', 'explain', 'logtree'] as const;
const DEEP_DIVES = ['feeds', 'mrlists', 'appends', 'rebuild', 'memory', 'import', 'repository', 'asof'] as const;
/** BENCH_ONLY=blackbox,appends runs a subset; `explain` needs `blackbox` (it reads the data the black-box phase seeded). */
const PHASES = new Set<string>(process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((p) => p.trim()) : DEFAULT_PHASES);
for (const phase of PHASES) if (![...DEFAULT_PHASES, ...DEEP_DIVES].includes(phase as never)) throw new Error(`BENCH_ONLY: unknown phase ${phase} (known: ${[...DEFAULT_PHASES, ...DEEP_DIVES].join(', ')})`);
if (PHASES.has('explain') && !PHASES.has('blackbox')) throw new Error('BENCH_ONLY: explain runs on the data of the blackbox phase; add blackbox');

async function main(): Promise<number> {
  const totalStarted = performance.now();
  sampleRss();
  const database = `forgelog_bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  const cleanups: Cleanups = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (error) {
        log(`cleanup: ${(error as Error).message}`);
      }
    }
  };
  // Ctrl-C or a `timeout`: stop the server processes and drop the database before leaving.
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));

  try {
    const { url, serverVersion } = await createDatabase(database, cleanups);
    log(`database ${database} on ${new URL(SERVER_URL).host} (PostgreSQL ${serverVersion}); phases: ${[...PHASES].join(', ')}`);
    const gen = await LoadGenerator.start();
    cleanups.push(() => gen.stop());

    const figures: Figures = {};
    let blackbox: BlackboxFigures | undefined;
    let explain: ExplainFigure[] | undefined;
    if (PHASES.has('blackbox')) {
      const rootToken = `bench-root-${process.pid}-${Date.now().toString(36)}`;
      blackbox = await measureBlackbox(gen, database, url, rootToken, cleanups);
      if (PHASES.has('explain')) explain = await measureExplain(gen, url, blackbox.data, cleanups);
      rssAfter('blackbox');
    }
    if (PHASES.has('feeds')) figures.feeds = await measureFeeds(gen, database, cleanups);
    if (PHASES.has('mrlists')) figures.mergeRequests = await measureMergeRequestLists(gen, database, cleanups);
    if (PHASES.has('appends') || PHASES.has('rebuild')) {
      // The in-process deep dives get a database of their own (the rebuild replays its whole log).
      const own = await createDatabase(`${database}_inproc`, cleanups);
      const app = await startApp(own.url, cleanups);
      if (PHASES.has('appends')) figures.appends = await measureAppends(app);
      if (PHASES.has('rebuild')) figures.rebuild = await measureRebuild(app, own.url, cleanups);
      await app.close();
      await app.closeBare();
    }
    if (PHASES.has('memory')) figures.memory = await measureMemory(`${database}_memory`);
    if (PHASES.has('import')) figures.importVerify = await measureImportVerify(`${database}_import`, cleanups);
    if (PHASES.has('asof')) figures.asOf = await measureAsOf(`${database}_asof`, cleanups);
    if (PHASES.has('repository')) figures.repository = await measureRepository(gen, `${database}_repository`, cleanups);
    if (PHASES.has('logtree')) figures.logTree = await measureLogTree(`${database}_logtree`, cleanups);

    await cleanup();
    return report(figures, { blackbox, explain, serverVersion, phases: [...PHASES], totalSeconds: round((performance.now() - totalStarted) / 1000, 1) });
  } finally {
    await cleanup();
  }
}

main().then(
  (missed) => process.exit(missed > 0 ? 1 : 0),
  (error: unknown) => {
    log(`bench failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(2);
  },
);
