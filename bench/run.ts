/**
 * `npm run bench`: one run, every figure side by side (see bench/README.md).
 *
 * The app under test runs in this process (openRuntime + createApp, on 127.0.0.1); the
 * "bare" baselines run in this process too, on their own port and their own pg pool, while
 * the app is idle; autocannon runs in a child process (bench/loadgen.ts) so it does not
 * share the server's event loop. Everything is bounded by time or count.
 *
 * Each measurement is a file of its own (reads.ts, writes.ts, project-areas.ts, group-lists.ts,
 * feeds.ts, appends.ts, rebuild.ts, memory.ts) with its figures, its targets and its rows of the report
 * (report.ts); what they share is in harness/.
 */
import { measureAppends } from './appends.js';
import { measureFeeds } from './feeds.js';
import { measureGroupLists } from './group-lists.js';
import { startApp } from './harness/app.js';
import { LoadGenerator } from './harness/load-generator.js';
import { log, round, rssAfter, sampleRss } from './harness/meters.js';
import { createDatabase, type Cleanups } from './harness/setup.js';
import { SERVER_URL, USERS } from './harness/settings.js';
import { createUsersOverHttp, type BenchUser } from './harness/users.js';
import { measureMemory } from './memory.js';
import { measureMergeRequestLists } from './merge-requests.js';
import { measureReads } from './reads.js';
import { measureProjectAreas } from './project-areas.js';
import { measureRebuild } from './rebuild.js';
import { report, type Figures } from './report.js';
import { measureWrites } from './writes.js';

const ALL_PHASES = ['reads', 'writes', 'areas', 'groups', 'feeds', 'mrlists', 'appends', 'rebuild', 'memory'] as const;
/** BENCH_ONLY=reads,writes runs a subset (for profiling one path). */
const PHASES = new Set<string>(process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((p) => p.trim()) : ALL_PHASES);

async function main() {
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
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

  try {
    const { url, serverVersion } = await createDatabase(database, cleanups);
    log(`database ${database} on ${new URL(SERVER_URL).host} (PostgreSQL ${serverVersion}); phases: ${[...PHASES].join(', ')}`);
    const app = await startApp(url, cleanups);
    const gen = await LoadGenerator.start();
    cleanups.push(() => gen.stop());
    rssAfter('setup');

    const figures: Figures = {};
    let users: BenchUser[] = [];
    if (PHASES.has('reads') || PHASES.has('writes')) {
      log(`creating ${USERS} users with tokens over HTTP…`);
      users = await createUsersOverHttp(app.base, app.rootToken, USERS);
      rssAfter('users');
    }
    if (PHASES.has('reads')) {
      figures.reads = await measureReads(gen, app, users);
      rssAfter('reads');
    }
    if (PHASES.has('writes')) {
      figures.writes = await measureWrites(gen, app, users);
      rssAfter('writes');
    }
    if (PHASES.has('areas')) {
      figures.areas = await measureProjectAreas(gen, app);
      rssAfter('areas');
    }
    if (PHASES.has('groups')) {
      figures.groups = await measureGroupLists(gen, database, cleanups);
      rssAfter('groups');
    }
    if (PHASES.has('feeds')) {
      figures.feeds = await measureFeeds(gen, database, cleanups);
      rssAfter('feeds');
    }
    if (PHASES.has('mrlists')) {
      figures.mergeRequests = await measureMergeRequestLists(gen, database, cleanups);
      rssAfter('mrlists');
    }
    if (PHASES.has('appends')) {
      figures.appends = await measureAppends(app);
      rssAfter('appends');
    }
    if (PHASES.has('rebuild')) figures.rebuild = await measureRebuild(app, url, cleanups);
    if (PHASES.has('memory')) figures.memory = await measureMemory(`${database}_memory`);

    await cleanup();
    report(figures, { serverVersion, poolSize: app.poolSize, phases: [...PHASES], totalSeconds: round((performance.now() - totalStarted) / 1000, 1) });
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`bench failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);
