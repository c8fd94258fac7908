/**
 * HTTP scenarios: servers on 127.0.0.1 that count their requests, and the interleaved
 * slices that compare a bare route with the full stack under the same background load.
 */
import { serve, type ServerType } from '@hono/node-server';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../../src/database/database.js';
import type { LoadJob } from '../loadgen.js';
import type { LoadGenerator } from './load-generator.js';
import { NO_TICKS, addTicks, cpuTicks, log, round, snapshotCounter, toCores, type CpuSplit, type StatementCounter } from './meters.js';
import { CONNECTIONS, SECONDS, SLICE_SECONDS, TRACE, WARMUP_SECONDS } from './settings.js';

/** What a load generator's run of one request mix gives: its rate, latency and answers. */
export interface LoadFigure {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
}

export interface HttpFigure extends LoadFigure {
  name: string;
  timeouts: number;
  sliceSeconds: number;
  /** Statements the app's pool sent per completed request (round trips). */
  statementsPerRequest?: number;
  /** Rollbacks per completed request on the app's pool (conflict retries). */
  retriesPerRequest?: number;
  /** Events appended per completed request (write scenarios; 1 = every write appended). */
  eventsPerRequest?: number;
  /** Average number of requests waiting for a pool connection (sampled every 20 ms). */
  poolWaiting: number;
  /** CPU of this process per request, microseconds. */
  serverCpuUsPerRequest: number;
  cpu: CpuSplit;
}

export interface Scenario {
  name: string;
  job: Omit<LoadJob, 'seconds' | 'connections'>;
  /** The server's request counters: each slice waits for it to drain before the next one. */
  traffic: Traffic;
  /** The server's pg pool: its queue of waiting checkouts is sampled. */
  pool: pg.Pool;
  /** The app's statement counter, for full-stack scenarios. */
  counter?: StatementCounter;
  /** Events of the type the scenario appends (checks that every write appended one). */
  countEvents?: () => Promise<number>;
}

export async function countEvents(db: Db, type: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from events where event_type = ${type}`.execute(db);
  return Number(rows[0]!.n);
}

/**
 * Runs scenarios interleaved: after a warm-up of each, BENCH_SECONDS of each in slices of
 * BENCH_SLICE_SECONDS, round-robin (order reversed every other round), so a bare route and
 * the full stack see the same background load on a shared machine. Slices of a scenario
 * are merged: requests summed, latency histograms merged, statements and CPU summed.
 */
export async function compareScenarios(
  gen: LoadGenerator,
  scenarios: Scenario[],
  { sliceSeconds = SLICE_SECONDS, seconds = SECONDS, connections = CONNECTIONS, warmupSeconds = WARMUP_SECONDS }: { sliceSeconds?: number; seconds?: number; connections?: number; warmupSeconds?: number } = {},
): Promise<HttpFigure[]> {
  for (const s of scenarios) {
    if (warmupSeconds <= 0) break;
    await gen.run({ ...s.job, connections, seconds: warmupSeconds });
    await drained(s.traffic);
  }
  const rounds = Math.max(1, Math.floor(seconds / sliceSeconds));
  const slice = seconds / rounds;
  const runId = `${Date.now()}-${Math.random()}`;
  const acc = scenarios.map(() => ({ statements: 0, rollbacks: 0, byText: new Map<string, number>(), ticks: NO_TICKS, cpuMicros: 0, events: 0, handled: 0, waiting: 0, samples: 0 }));
  for (let round = 0; round < rounds; round++) {
    const order = scenarios.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const s = scenarios[i]!;
      const a = acc[i]!;
      const before = s.counter ? snapshotCounter(s.counter) : undefined;
      const eventsBefore = s.countEvents ? await s.countEvents() : 0;
      const ticks = cpuTicks(gen.child.pid);
      const selfCpu = process.cpuUsage();
      const handledBefore = s.traffic.handled;
      const sampler = setInterval(() => {
        a.waiting += s.pool.waitingCount;
        a.samples++;
      }, 20);
      await gen.run({ ...s.job, connections, seconds: slice }, `${runId}:${i}`);
      clearInterval(sampler);
      // Requests still in flight when the slice ends are finished (and their work counted)
      // before the next slice starts; the rate only counts answers inside the slice.
      await drained(s.traffic);
      a.handled += s.traffic.handled - handledBefore;
      a.ticks = addTicks(a.ticks, ticks());
      const used = process.cpuUsage(selfCpu);
      a.cpuMicros += used.user + used.system;
      if (s.countEvents) a.events += (await s.countEvents()) - eventsBefore;
      if (s.counter && before) {
        a.statements += s.counter.statements - before.statements;
        a.rollbacks += s.counter.rollbacks - before.rollbacks;
        for (const [text, n] of s.counter.byText) {
          const delta = n - (before.byText.get(text) ?? 0);
          if (delta > 0) a.byText.set(text, (a.byText.get(text) ?? 0) + delta);
        }
      }
    }
  }
  const figures: HttpFigure[] = [];
  for (const [i, s] of scenarios.entries()) {
    const a = acc[i]!;
    const r = await gen.collect(`${runId}:${i}`, s.job.url, connections);
    const split = toCores(a.ticks);
    const figure: HttpFigure = {
      name: s.name,
      rps: round(r.rps, r.rps < 10 ? 1 : 0),
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      requests: r.requests,
      non2xx: r.non2xx,
      errors: r.errors,
      statusCodes: r.statusCodes,
      timeouts: r.timeouts,
      sliceSeconds: round(slice, 2),
      serverCpuUsPerRequest: a.handled > 0 ? round(a.cpuMicros / a.handled) : NaN,
      poolWaiting: a.samples > 0 ? round(a.waiting / a.samples, 1) : 0,
      cpu: split,
    };
    // Per-request figures divide by the requests the server handled (including each slice's tail).
    if (s.counter && a.handled > 0) {
      figure.statementsPerRequest = round(a.statements / a.handled, 2);
      figure.retriesPerRequest = round(a.rollbacks / a.handled, 4);
    }
    if (s.countEvents && a.handled > 0) figure.eventsPerRequest = round(a.events / a.handled, 3);
    log(
      `  ${s.name}: ${figure.rps} req/s, p50 ${figure.p50} ms, p90 ${figure.p90} ms, p99 ${figure.p99} ms, non-2xx ${figure.non2xx}, errors ${figure.errors}` +
        (figure.statementsPerRequest !== undefined ? `, ${figure.statementsPerRequest} stmts/req` : '') +
        (figure.eventsPerRequest !== undefined ? `, ${figure.eventsPerRequest} events/req` : '') +
        `, pool waiters ${figure.poolWaiting} (cpu cores: server ${split.server}, loadgen ${split.loadgen}, postgres ${split.postgres}, other ${split.other})`,
    );
    if (figure.non2xx > 0) log(`    status codes: ${JSON.stringify(r.statusCodes)}`);
    if (TRACE && a.handled > 0 && a.byText.size > 0) {
      log('    statements per request:');
      for (const [text, n] of [...a.byText].sort((x, y) => y[1] - x[1])) if (n / a.handled > 0.005) log(`      ${(n / a.handled).toFixed(2).padStart(6)}  ${text}`);
    }
    figures.push(figure);
  }
  return figures;
}

/** Requests a server is handling / has handled (the load generator cannot see the ones it abandons at the end of a slice). */
export interface Traffic {
  inFlight: number;
  handled: number;
}

export function listenLocal(fetch: (request: Request) => Response | Promise<Response>): Promise<{ server: ServerType; port: number; traffic: Traffic }> {
  const traffic: Traffic = { inFlight: 0, handled: 0 };
  const counted = async (request: Request) => {
    traffic.inFlight++;
    try {
      return await fetch(request);
    } finally {
      traffic.inFlight--;
      traffic.handled++;
    }
  };
  return new Promise((resolve) => {
    const server = serve({ fetch: counted, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ server, port: info.port, traffic }));
  });
}

/** Waits (at most 15 s) until the server has answered every request it received. */
export async function drained(traffic: Traffic) {
  const deadline = performance.now() + 15_000;
  while (traffic.inFlight > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}
export const closeServer = (server: ServerType) => new Promise<void>((resolve) => server.close(() => resolve()));
