/**
 * The black-box phase (bench/README.md, "Black-box"): forgelog as `npm start` runs it, the bare
 * server, and the load generator, three processes; the data set seeded through the API; every
 * endpoint paired with its bare route, the two sides of a pair adjacent, in several rounds;
 * then project creation with 8 clients, the server's memory, and its statements while idle.
 */
import pg from 'pg';
import type { LoadGenerator } from '../harness/load-generator.js';
import { log, processCpu, round } from '../harness/meters.js';
import { withAdmin, type Cleanups } from '../harness/setup.js';
import type { LoadFigure } from '../harness/scenarios.js';
import { BARE_POOL, CONNECTIONS, CREATE_CLIENTS, CREATE_SECONDS, IDLE_SECONDS, IDLE_SETTLE_SECONDS, ROUNDS, SLICE_SECONDS, WARMUP_SECONDS } from '../harness/settings.js';
import type { LoadJob, LoadResult } from '../loadgen.js';
import { bareRequests, endpoints, type Endpoint } from './endpoints.js';
import { memoryOf, startBare, startForgelog, type ServerProcess } from './processes.js';
import { seed, type SeededData } from './seed.js';

export interface SideFigure extends LoadFigure {
  /** Requests/s of each round's slice. */
  rpsByRound: number[];
  /** Cores used by each process while this side ran. */
  cpu: Record<string, number>;
}

export interface PairFigure {
  endpoint: Endpoint;
  forgelog: SideFigure;
  bare: SideFigure;
  ratioByRound: number[];
  ratio: number;
  ratioMin: number;
  ratioMax: number;
}

export interface BlackboxFigures {
  data: SeededData;
  seedSeconds: number;
  pairs: PairFigure[];
  create: { rps: number; p90: number; requests: number; non2xx: number; errors: number; statusCodes: Record<string, number>; cpu: Record<string, number> };
  memory: { peakMb: number; rssMaxMb: number; rssEndMb: number; seedPeakMb: number };
  idle: { transactions: number; seconds: number; perSecond: number };
  settings: Record<string, number>;
}

export const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * After a slice the load generator abandons the requests in flight; the server still answers
 * them. Wait about as long as that backlog takes (connections × the slice's time per answer),
 * so the next slice does not inherit it.
 */
export const settle = (r: LoadResult, connections: number) => sleep(Math.min(5000, 50 + (1.5 * connections * r.seconds * 1000) / Math.max(1, r.requests)));

/** Transactions committed or rolled back on the database (pg_stat_database). */
async function transactions(database: string): Promise<number> {
  return withAdmin(async (admin) => {
    const { rows } = await admin.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [database]);
    return Number(rows[0]?.n ?? NaN);
  });
}

/**
 * Statements the server sends while nothing asks it anything. PostgreSQL 15 publishes a
 * backend's counts at most once a second and at the latest 10 s after its last transaction
 * (PGSTAT_IDLE_INTERVAL), so the window opens after a settle longer than that.
 */
async function idleRate(database: string, base: string) {
  const caughtUp = await followersCaughtUp(base);
  log(`idle: the async projections and reactors caught up with the seed in ${caughtUp} s; ${IDLE_SETTLE_SECONDS} s to settle, then ${IDLE_SECONDS} s counted…`);
  await sleep(IDLE_SETTLE_SECONDS * 1000);
  const before = await transactions(database);
  const started = performance.now();
  await sleep(IDLE_SECONDS * 1000);
  const n = (await transactions(database)) - before;
  const seconds = (performance.now() - started) / 1000;
  log(`  ${n} transactions in ${round(seconds, 1)} s`);
  return { transactions: n, seconds: round(seconds, 1), perSecond: round(n / seconds, 2) };
}

/**
 * Seconds until every async projection and reactor has applied the seed's events, as the
 * server's /-/metrics says (forgelog_projection_lag_events): a server still working through
 * a backlog is not idle. At most 10 minutes; the scrapes are done before the idle window.
 */
export async function followersCaughtUp(base: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    const text = await (await fetch(`${base}/-/metrics`)).text();
    const behind = text.split('\n').filter((line) => line.startsWith('forgelog_projection_lag_events{') && Number(line.split(' ').at(-1)) > 0);
    const seconds = round((performance.now() - started) / 1000, 1);
    if (behind.length === 0) return seconds;
    if (seconds > 600) throw new Error(`the async projections and reactors did not catch up with the seed in 10 minutes: ${behind.join('; ')}`);
    await sleep(1000);
  }
}

/**
 * VACUUM ANALYZE of the seeded database, as autovacuum would have done by now on a server
 * where it runs — it is off on this machine's (conf.d/90-ci.conf). Without statistics every
 * plan is made for tables of a few rows: the bare merge request page took 60 ms instead of
 * 0.5, and forgelog's plans were as wrong.
 */
export async function analyze(url: string) {
  const started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
  log(`  vacuum analyze (autovacuum's work; off on this server) in ${round((performance.now() - started) / 1000, 1)} s`);
}

/** Runs the phase; forgelog and the bare server are stopped at its end (and by `cleanups` on Ctrl-C). */
export async function measureBlackbox(gen: LoadGenerator, database: string, url: string, rootToken: string, cleanups: Cleanups): Promise<BlackboxFigures> {
  const forgelog = await startForgelog(url, rootToken);
  cleanups.push(forgelog.stop);
  try {
    return await measure(gen, database, url, rootToken, forgelog, cleanups);
  } finally {
    await forgelog.stop();
  }
}

async function measure(gen: LoadGenerator, database: string, url: string, rootToken: string, forgelog: ServerProcess, cleanups: Cleanups): Promise<BlackboxFigures> {
  log('seeding through the API as root…');
  const seedStarted = performance.now();
  const data = await seed(forgelog.base, rootToken);
  const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);
  const seedPeakMb = memoryOf(forgelog.pid).peakMb;
  log(`  seeded in ${seedSeconds} s; forgelog peak RSS so far ${seedPeakMb} MB`);

  const idle = await idleRate(database, forgelog.base);
  await analyze(url);

  const bare = await startBare(url, BARE_POOL);
  cleanups.push(bare.stop);
  let rssMaxMb = 0;
  const rssSampler = setInterval(() => {
    rssMaxMb = Math.max(rssMaxMb, memoryOf(forgelog.pid).rssMb || 0);
  }, 250);
  try {
    const pids = { forgelog: forgelog.pid, bare: bare.pid, loadgen: gen.child.pid };
    const list = endpoints(data);
    const jobOf = (e: Endpoint, side: 'forgelog' | 'bare'): Omit<LoadJob, 'seconds'> => ({
      url: side === 'forgelog' ? forgelog.base : bare.base,
      connections: CONNECTIONS,
      requests: side === 'forgelog' ? e.requests : bareRequests(data, e.bare),
      idReplacement: e.idReplacement ?? e.bare === 'insert',
    });

    log(`black-box: ${list.length} endpoints, each beside its bare route; ${ROUNDS} rounds of ${SLICE_SECONDS} s slices at ${CONNECTIONS} connections (after ${WARMUP_SECONDS} s of warm-up each)…`);
    for (const e of list) {
      if (WARMUP_SECONDS <= 0) break;
      for (const side of ['bare', 'forgelog'] as const) {
        const r = await gen.run({ ...jobOf(e, side), seconds: WARMUP_SECONDS });
        if (side === 'forgelog' && r.requests > 0 && r.non2xx === r.requests) throw new Error(`${e.name}: every answer of the warm-up was non-2xx: ${JSON.stringify(r.statusCodes)}`);
        await settle(r, CONNECTIONS);
      }
    }
    const runId = `${Date.now()}-${Math.random()}`;
    const acc = list.map(() => ({
      forgelog: { rpsByRound: [] as number[], ticks: [] as Record<string, number>[] },
      bare: { rpsByRound: [] as number[], ticks: [] as Record<string, number>[] },
    }));
    for (let r = 0; r < ROUNDS; r++) {
      const order = list.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        const sides = r % 2 === 0 ? (['bare', 'forgelog'] as const) : (['forgelog', 'bare'] as const);
        for (const side of sides) {
          const cpu = processCpu(pids);
          const result = await gen.run({ ...jobOf(list[i]!, side), seconds: SLICE_SECONDS }, `${runId}:${i}:${side}`);
          acc[i]![side].ticks.push(cpu());
          acc[i]![side].rpsByRound.push(result.seconds > 0 ? result.requests / result.seconds : 0);
          await settle(result, CONNECTIONS);
        }
      }
      log(`  round ${r + 1}/${ROUNDS} done`);
    }

    const pairs: PairFigure[] = [];
    for (const [i, e] of list.entries()) {
      const side = async (name: 'forgelog' | 'bare'): Promise<SideFigure> => {
        const merged = await gen.collect(`${runId}:${i}:${name}`, jobOf(e, name).url, CONNECTIONS);
        const a = acc[i]![name];
        const cpu: Record<string, number> = {};
        for (const key of Object.keys(a.ticks[0] ?? {})) if (key !== 'seconds') cpu[key] = round(median(a.ticks.map((t) => t[key]!)), 2);
        return {
          rpsByRound: a.rpsByRound.map((x) => round(x)),
          rps: round(median(a.rpsByRound)),
          p50: merged.latency.p50,
          p90: merged.latency.p90,
          p99: merged.latency.p99,
          requests: merged.requests,
          non2xx: merged.non2xx,
          errors: merged.errors,
          statusCodes: merged.statusCodes,
          cpu,
        };
      };
      const f = await side('forgelog');
      const b = await side('bare');
      const ratios = f.rpsByRound.map((x, r) => x / Math.max(1e-9, b.rpsByRound[r]!));
      pairs.push({ endpoint: e, forgelog: f, bare: b, ratioByRound: ratios.map((x) => round(x, 3)), ratio: round(median(ratios), 3), ratioMin: round(Math.min(...ratios), 3), ratioMax: round(Math.max(...ratios), 3) });
      log(`  ${e.name}: ${f.rps} req/s (p90 ${f.p90} ms) vs bare ${b.rps} req/s: ${round(median(ratios), 2)} (${round(Math.min(...ratios), 2)}–${round(Math.max(...ratios), 2)})${f.non2xx ? `, NON-2XX ${JSON.stringify(f.statusCodes)}` : ''}`);
    }

    log(`project creation: POST /projects as root, ${CREATE_CLIENTS} clients for ${CREATE_SECONDS} s…`);
    const cpu = processCpu(pids);
    const created = await gen.run({
      url: forgelog.base,
      connections: CREATE_CLIENTS,
      seconds: CREATE_SECONDS,
      idReplacement: true,
      requests: [{ method: 'POST', path: '/api/v4/projects', headers: { 'content-type': 'application/json', 'PRIVATE-TOKEN': rootToken }, body: JSON.stringify({ name: 'new [<id>] x' }) }],
    });
    const createCpu = Object.fromEntries(Object.entries(cpu()).filter(([k]) => k !== 'seconds').map(([k, v]) => [k, round(v, 2)]));
    const ok = created.requests - created.non2xx;
    const create = { rps: round(ok / Math.max(1e-9, created.seconds), 1), p90: created.latency.p90, requests: created.requests, non2xx: created.non2xx, errors: created.errors, statusCodes: created.statusCodes, cpu: createCpu };
    log(`  ${create.rps} projects/s, p90 ${create.p90} ms${create.non2xx ? `, NON-2XX ${JSON.stringify(create.statusCodes)}` : ''}`);
    await settle(created, CREATE_CLIENTS);

    const end = memoryOf(forgelog.pid);
    return {
      data,
      seedSeconds,
      pairs,
      create,
      memory: { peakMb: end.peakMb, rssMaxMb: Math.max(rssMaxMb, end.rssMb), rssEndMb: end.rssMb, seedPeakMb },
      idle,
      settings: { rounds: ROUNDS, sliceSeconds: SLICE_SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS, barePool: BARE_POOL, createClients: CREATE_CLIENTS, createSeconds: CREATE_SECONDS },
    };
  } finally {
    clearInterval(rssSampler);
    await bare.stop();
  }
}
