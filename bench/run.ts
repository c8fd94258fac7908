/**
 * `npm run bench`: one run, every figure side by side (see bench/README.md).
 *
 * The app under test runs in this process (openRuntime + createApp, on 127.0.0.1); the
 * "bare" baselines run in this process too, on their own port and their own pg pool, while
 * the app is idle; autocannon runs in a child process (bench/loadgen.ts) so it does not
 * share the server's event loop. Everything is bounded by time or count.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import type { CommandContext } from '../src/commands/handler.js';
import { DEFAULT_PROFILE, users } from '../src/commands/users.js';
import { hashPassword, tokenDigest } from '../src/commands/secrets.js';
import { eventHash } from '../src/eventstore/hash.js';
import { loadConfig, type Config } from '../src/config.js';
import { openDatabase, type DatabaseHandle, type Db } from '../src/database.js';
import {
  userEventIndex,
  userStreamId,
  type UserEvent,
} from '../src/domain/users.js';
import type { UserCommand } from '../src/domain/users/decider.js';
import { GENESIS_HASH, PROJECTED_EVENT_COLUMNS, appendToStream, toLoggedEvent, toStoredEvent } from '../src/eventstore/store.js';
import { createApp } from '../src/http/app.js';
import type { Projector } from '../src/projections/projector.js';
import { PROJECTORS } from '../src/projections/registry.js';
import { usersProjector } from '../src/projections/users.js';
import { openRuntime, type Runtime } from '../src/runtime.js';
import { sealPending } from '../src/eventstore/seal.js';
import { seedGroups, type GroupSeed, type SeedUser } from './groups.js';
import type { LoadJob, LoadMessage, LoadResult } from './loadgen.js';
import { MEMORY_TARGETS, measureMemory, memoryRows, type MemoryFigures } from './memory.js';

// ───────────────────────────── Settings ─────────────────────────────

const env = process.env;
const num = (value: string | undefined, fallback: number) => (value !== undefined && value !== '' && Number.isFinite(Number(value)) ? Number(value) : fallback);
const SECONDS = num(env.BENCH_SECONDS, 5);
/** Scenarios compared with each other run interleaved in slices of this length. */
const SLICE_SECONDS = num(env.BENCH_SLICE_SECONDS, 1);
const WARMUP_SECONDS = num(env.BENCH_WARMUP_SECONDS, 1);
const APPEND_SECONDS = num(env.BENCH_APPEND_SECONDS, Math.max(1, Math.round(SECONDS * 0.6)));
const CONNECTIONS = num(env.BENCH_CONNECTIONS, 50);
const USERS = num(env.BENCH_USERS, CONNECTIONS);
const REBUILD_EVENTS = num(env.BENCH_REBUILD_EVENTS, 100_000);
/** Log order of the seeded events: `streams` (user by user) or `waves` (see seedUserEvents). */
const SEED_ORDER = env.BENCH_SEED === 'waves' ? 'waves' : 'streams';
/** Seeding transactions running at once (500 streams each). */
const SEED_PARALLEL = num(env.BENCH_SEED_PARALLEL, 8);
const WRITER_LEVELS = (env.BENCH_WRITERS ?? '1,8,32').split(',').map(Number).filter((n) => n > 0);
/** Streams per append level, shared among its writers (keeps stream length alike across levels). */
const APPEND_STREAMS = num(env.BENCH_APPEND_STREAMS, 256);
/** Group-list scenarios (own database): groups, projects, users who own and join them, and the regular caller's groups. */
const GROUP_COUNT = num(env.BENCH_GROUPS, 10_000);
const PROJECT_COUNT = num(env.BENCH_PROJECTS, 50_000);
const GROUP_USERS = Math.max(1, num(env.BENCH_GROUP_USERS, 500));
const MEMBER_GROUPS = num(env.BENCH_MEMBER_GROUPS, 300);
/** Processes seeding the groups (node's side of seeding is CPU-bound): one per core, at most 4. */
const SEED_WORKERS = Math.max(1, num(env.BENCH_SEED_WORKERS, Math.min(4, availableParallelism())));
/** Slices of the group lists: at least 2 s (a slow list answers nothing within a 1 s slice at 50 connections). */
const GROUP_SLICE_SECONDS = num(env.BENCH_GROUP_SLICE_SECONDS, Math.max(2, SLICE_SECONDS));
/** BENCH_GROUPS_VACUUM=1: `vacuum analyze` after the seed instead of `analyze` (flushes the GIN pending lists). */
const GROUPS_VACUUM = env.BENCH_GROUPS_VACUUM === '1';
/** Seconds per group-list scenario at 1 connection (unloaded latency); 0 skips them. */
const UNLOADED_SECONDS = num(env.BENCH_UNLOADED_SECONDS, 2);
/** BENCH_EXPLAIN=1: EXPLAIN ANALYZE of every SELECT one request of each group-list scenario sends. */
const EXPLAIN = env.BENCH_EXPLAIN === '1';
/** BENCH_KEEP=1: keep the bench's databases at the end (to query them, e.g. EXPLAIN a rewrite). */
const KEEP = env.BENCH_KEEP === '1';
const ALL_PHASES = ['reads', 'writes', 'groups', 'appends', 'rebuild', 'memory'] as const;
/** BENCH_ONLY=reads,writes runs a subset (for profiling one path). */
const PHASES = new Set<string>(env.BENCH_ONLY ? env.BENCH_ONLY.split(',').map((p) => p.trim()) : ALL_PHASES);
/** BENCH_POOL: pool size of the app and of the bare routes (default: openDatabase's). */
const POOL_SIZE = env.BENCH_POOL ? num(env.BENCH_POOL, 10) : undefined;
/** BENCH_WORKERS=0: no in-process async workers (like a `serve` told not to run them). */
const WORKERS = env.BENCH_WORKERS !== '0';
/** BENCH_WHATIF=1 adds the lean-write what-if to the writes (see leanWriteApp). */
const WHATIF = env.BENCH_WHATIF === '1';
/** BENCH_TRACE=1 prints the statements the app sent per request / command / replayed event. */
const TRACE = env.BENCH_TRACE === '1';
const SERVER_URL = env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const HERE = dirname(fileURLToPath(import.meta.url));

// ───────────────────────────── Measurement helpers ─────────────────────────────

/** Counts the statements the app's pool sends (round trips) and its rollbacks (= conflict retries). */
interface StatementCounter {
  statements: number;
  rollbacks: number;
  /** Statement count by its first words (BENCH_TRACE=1 prints them per request). */
  byText: Map<string, number>;
  /** When set, every statement (text and parameters) is recorded here (BENCH_EXPLAIN). */
  capture?: { text: string; values: unknown[] }[] | undefined;
}
function countStatements(pool: pg.Pool): StatementCounter {
  const counter: StatementCounter = { statements: 0, rollbacks: 0, byText: new Map() };
  pool.on('connect', (client) => {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      counter.statements++;
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      if (typeof text === 'string') {
        if (counter.capture) counter.capture.push({ text, values: Array.isArray(args[1]) ? [...(args[1] as unknown[])] : [] });
        if (/^\s*rollback\b/i.test(text)) counter.rollbacks++;
        if (TRACE) {
          const key = text.replace(/\s+/g, ' ').trim().slice(0, 72);
          counter.byText.set(key, (counter.byText.get(key) ?? 0) + 1);
        }
      }
      return original(...args);
    };
  });
  return counter;
}
const snapshotCounter = (c: StatementCounter) => ({ statements: c.statements, rollbacks: c.rollbacks, byText: new Map(c.byText) });
function traceStatements(label: string, before: ReturnType<typeof snapshotCounter>, after: StatementCounter, per: number) {
  if (!TRACE || per <= 0) return;
  log(`    statements per ${label}:`);
  const rows = [...after.byText].map(([text, n]) => [text, (n - (before.byText.get(text) ?? 0)) / per] as const).filter(([, n]) => n > 0.005);
  for (const [text, n] of rows.sort((a, b) => b[1] - a[1])) log(`      ${n.toFixed(2).padStart(6)}  ${text}`);
}

/**
 * CPU split from /proc (Linux), in cores: this process, the load generator, PostgreSQL's
 * processes (comm "postgres", any database: other users of the cluster count too) and
 * everything else on the machine (other people's test runs on a shared box).
 */
const CLOCK_TICKS = 100;
function statTicks(pid: string): { comm: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}
function cpuSnapshot(loadgenPid: number | undefined) {
  const postgres = new Map<string, number>();
  let busy = NaN;
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const stat = statTicks(pid);
      if (stat?.comm === 'postgres') postgres.set(pid, stat.ticks);
    }
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    busy = cpu[0]! + cpu[1]! + cpu[2]! + cpu[5]! + cpu[6]! + cpu[7]!; // user nice system irq softirq steal
  } catch {}
  return { self: statTicks('self')?.ticks ?? NaN, gen: loadgenPid ? (statTicks(String(loadgenPid))?.ticks ?? 0) : 0, postgres, busy, at: performance.now() };
}
interface CpuSplit {
  server: number;
  loadgen: number;
  postgres: number;
  other: number;
}
/** CPU ticks by owner over some seconds; sums of several windows stay meaningful. */
interface CpuTicks {
  self: number;
  gen: number;
  postgres: number;
  other: number;
  seconds: number;
}
const NO_TICKS: CpuTicks = { self: 0, gen: 0, postgres: 0, other: 0, seconds: 0 };
const addTicks = (a: CpuTicks, b: CpuTicks): CpuTicks => ({
  self: a.self + b.self,
  gen: a.gen + b.gen,
  postgres: a.postgres + b.postgres,
  other: a.other + b.other,
  seconds: a.seconds + b.seconds,
});
function toCores(t: CpuTicks): CpuSplit {
  const cores = (ticks: number) => (t.seconds > 0 ? Math.round((ticks / CLOCK_TICKS / t.seconds) * 100) / 100 : 0);
  return { server: cores(t.self), loadgen: cores(t.gen), postgres: cores(t.postgres), other: cores(t.other) };
}
function cpuTicks(loadgenPid: number | undefined) {
  const start = cpuSnapshot(loadgenPid);
  return (): CpuTicks => {
    const end = cpuSnapshot(loadgenPid);
    const self = end.self - start.self;
    const gen = end.gen - start.gen;
    // Per backend: new ones count from 0; ones that exited meanwhile are lost (counted as other).
    let postgres = 0;
    for (const [pid, ticks] of end.postgres) postgres += ticks - (start.postgres.get(pid) ?? 0);
    return { self, gen, postgres, other: Math.max(0, end.busy - start.busy - self - gen - postgres), seconds: (end.at - start.at) / 1000 };
  };
}
const cpuMeter = (loadgenPid: number | undefined) => {
  const stop = cpuTicks(loadgenPid);
  return () => toCores(stop());
};

/** RSS after each phase, and the peak (sampled every 50 ms, plus the kernel's maxRSS). */
const memory = {
  peakSampled: 0,
  phases: [] as { phase: string; rssMb: number; heapUsedMb: number }[],
};
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const sampler = setInterval(() => {
  memory.peakSampled = Math.max(memory.peakSampled, process.memoryUsage.rss());
}, 50);
sampler.unref();
function rssAfter(phase: string) {
  const usage = process.memoryUsage();
  memory.peakSampled = Math.max(memory.peakSampled, usage.rss);
  memory.phases.push({ phase, rssMb: mb(usage.rss), heapUsedMb: mb(usage.heapUsed) });
  log(`  rss after ${phase}: ${mb(usage.rss)} MB`);
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

// ───────────────────────────── Load generator (child process) ─────────────────────────────

class LoadGenerator {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: LoadResult & { rss: number }) => void; reject: (e: Error) => void }>();
  private constructor(readonly child: ChildProcess) {
    child.on('message', (message: { id?: number; result?: LoadResult; rss?: number; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.waiting.get(message.id);
      if (!waiter) return;
      this.waiting.delete(message.id);
      if (message.error) waiter.reject(new Error(`load generator: ${message.error}`));
      else waiter.resolve({ ...message.result!, rss: message.rss ?? 0 });
    });
    child.on('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`load generator exited (${code})`));
      this.waiting.clear();
    });
  }

  static start(): Promise<LoadGenerator> {
    const child = fork(join(HERE, 'loadgen.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('load generator did not start')), 30_000);
      child.once('message', () => {
        clearTimeout(timer);
        resolve(new LoadGenerator(child));
      });
      child.once('error', reject);
    });
  }

  run(job: LoadJob, key?: string): Promise<LoadResult & { rss: number }> {
    return this.send(job.seconds + 30, (id) => ({ id, job, ...(key === undefined ? {} : { key }) }));
  }

  /** Merges the slices run under `key` into one result. */
  collect(key: string, url: string): Promise<LoadResult & { rss: number }> {
    return this.send(30, (id) => ({ id, collect: key, url, connections: CONNECTIONS }));
  }

  private send(timeoutSeconds: number, message: (id: number) => LoadMessage): Promise<LoadResult & { rss: number }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`load job timed out after ${timeoutSeconds} s`));
      }, timeoutSeconds * 1000);
      this.waiting.set(id, {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.child.send(message(id));
    });
  }

  stop() {
    if (this.child.exitCode === null) this.child.kill();
  }
}

// ───────────────────────────── Scenario plumbing ─────────────────────────────

interface HttpFigure {
  name: string;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
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

interface Scenario {
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

async function countEvents(db: Db, type: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from events where event_type = ${type}`.execute(db);
  return Number(rows[0]!.n);
}

/**
 * Runs scenarios interleaved: after a warm-up of each, BENCH_SECONDS of each in slices of
 * BENCH_SLICE_SECONDS, round-robin (order reversed every other round), so a bare route and
 * the full stack see the same background load on a shared machine. Slices of a scenario
 * are merged: requests summed, latency histograms merged, statements and CPU summed.
 */
async function compareScenarios(gen: LoadGenerator, scenarios: Scenario[], sliceSeconds = SLICE_SECONDS): Promise<HttpFigure[]> {
  for (const s of scenarios) {
    if (WARMUP_SECONDS <= 0) break;
    await gen.run({ ...s.job, connections: CONNECTIONS, seconds: WARMUP_SECONDS });
    await drained(s.traffic);
  }
  const rounds = Math.max(1, Math.floor(SECONDS / sliceSeconds));
  const slice = SECONDS / rounds;
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
      await gen.run({ ...s.job, connections: CONNECTIONS, seconds: slice }, `${runId}:${i}`);
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
    const r = await gen.collect(`${runId}:${i}`, s.job.url);
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
interface Traffic {
  inFlight: number;
  handled: number;
}

function listenLocal(fetch: (request: Request) => Response | Promise<Response>): Promise<{ server: ServerType; port: number; traffic: Traffic }> {
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
async function drained(traffic: Traffic) {
  const deadline = performance.now() + 15_000;
  while (traffic.inFlight > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}
/** Runs fn the first time only (cleanups may also run early). */
function once(fn: () => Promise<unknown> | unknown): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= Promise.resolve().then(fn).then(() => undefined));
}
const closeServer = (server: ServerType) => new Promise<void>((resolve) => server.close(() => resolve()));

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

// ───────────────────────────── Database lifecycle ─────────────────────────────

function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(SERVER_URL, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

// ───────────────────────────── Scenarios ─────────────────────────────

interface BenchUser {
  id: number;
  token: string;
}

async function createUsersOverHttp(base: string, rootToken: string, count: number): Promise<BenchUser[]> {
  const users: BenchUser[] = [];
  const stamp = Date.now().toString(36);
  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${base}/api/v4${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': rootToken, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as { id: number; token: string };
  };
  await pool(
    Array.from({ length: count }, (_, i) => i),
    4,
    async (i) => {
      const username = `bench_${stamp}_${i}`;
      const user = await call('POST', '/users', { email: `${username}@example.com`, username, name: `Bench ${i}`, password: 'benchmark-password', skip_confirmation: true });
      const token = await call('POST', `/users/${user.id}/personal_access_tokens`, { name: 'bench', scopes: ['api'] });
      users[i] = { id: user.id, token: token.token };
    },
  );
  return users;
}

/** Bare hono route: one SELECT of a users row by id on its own pool. */
function bareReadApp(barePool: pg.Pool) {
  return new Hono().get('/users/:id', async (c) => {
    const { rows } = await barePool.query('select * from users where id = $1', [Number(c.req.param('id'))]);
    if (rows.length === 0) return c.json({ message: '404 User Not Found' }, 404);
    return c.json(rows[0]);
  });
}

/**
 * What-if (BENCH_WHATIF=1), not the app: GET /user's two statements (token by digest, then
 * its user by id, both `select *`) in a bare route returning the row — the price of the
 * second round trip apart from the HTTP kernel and the entity.
 */
function twoSelectApp(barePool: pg.Pool) {
  return new Hono().get('/user', async (c) => {
    const token = await barePool.query('select * from personal_access_tokens where token_digest = $1', [tokenDigest(c.req.header('private-token') ?? '')]);
    const row = token.rows[0] as { user_id: number } | undefined;
    if (!row) return c.json({ message: '401 Unauthorized' }, 401);
    const { rows } = await barePool.query('select * from users where id = $1', [row.user_id]);
    return c.json(rows[0]);
  });
}

/** Bare hono route: BEGIN; INSERT one row into a scratch table; COMMIT, on its own pool. */
function bareWriteApp(barePool: pg.Pool) {
  return new Hono().put('/users/:id/status', async (c) => {
    const body = await c.req.json<{ emoji?: string; message?: string }>();
    const client = await barePool.connect();
    try {
      await client.query('begin');
      await client.query('insert into bench_scratch (user_id, payload) values ($1, $2)', [Number(c.req.param('id')), JSON.stringify(body)]);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    return c.json({ emoji: body.emoji ?? '', message: body.message ?? '' });
  });
}

/**
 * What-if (BENCH_WHATIF=1), not the app: the same write with the app's own SQL shapes — token
 * and user in one joined query, the stream head, the events insert (trigger and indexes
 * included), the users projection update returning the row — on ONE checkout, 6 statements.
 * It prices the round trips and checkouts of PUT /user/status apart from the SQL it runs.
 */
function leanWriteApp(barePool: pg.Pool) {
  return new Hono().put('/user/status', async (c) => {
    const token = c.req.header('private-token') ?? '';
    const body = await c.req.json<{ emoji?: string; message?: string }>();
    const client = await barePool.connect();
    try {
      const auth = await client.query(
        'select u.id, u.username, u.state, t.id as token_id, t.scopes from personal_access_tokens t join users u on u.id = t.user_id where t.token_digest = $1 and not t.revoked',
        [tokenDigest(token)],
      );
      const user = auth.rows[0] as { id: number; username: string; token_id: number } | undefined;
      if (!user) return c.json({ message: '401 Unauthorized' }, 401);
      await client.query('begin');
      const streamId = userStreamId(user.id);
      const head = await client.query<{ stream_version: number; hash: string }>(
        'select stream_version, hash from events where stream_id = $1 order by stream_version desc limit 1',
        [streamId],
      );
      const version = (head.rows[0]?.stream_version ?? 0) + 1;
      const data = { id: user.id, emoji: body.emoji ?? 'speech_balloon', message: body.message ?? null, message_html: body.message ?? '' };
      const metadata = { actor_id: user.id, actor_username: user.username, token_id: user.token_id, request_id: randomUUID() };
      const occurredAt = new Date();
      const eventId = uuidv7();
      const hash = eventHash(head.rows[0]?.hash ?? GENESIS_HASH, { streamId, streamVersion: version, eventId, type: 'UserStatusSet', schemaVersion: 1, data, metadata, occurredAt });
      await client.query(
        `insert into events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata, actor_id, target_type, target_id, occurred_at, hash)
         values ($1, $2, $3, 'UserStatusSet', 1, $4, $5, $6, 'User', $6, $7, $8)`,
        [streamId, version, eventId, JSON.stringify(data), JSON.stringify(metadata), user.id, occurredAt.toISOString(), hash],
      );
      const row = await client.query(
        'update users set status_emoji = $2, status_message = $3, status_message_html = $4, updated_at = $5, stream_version = $6 where id = $1 and stream_version < $6 returning *',
        [user.id, data.emoji, data.message, data.message_html, occurredAt.toISOString(), version],
      );
      await client.query('commit');
      const updated = row.rows[0] as { status_emoji: string; status_message: string; status_message_html: string } | undefined;
      return c.json({ emoji: updated?.status_emoji ?? null, message: updated?.status_message ?? null, message_html: updated?.status_message_html ?? '' });
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  });
}

/** Creates users through handleCommand (a precomputed password hash: no scrypt per user). */
async function createUsersDirect(ctx: CommandContext, count: number, passwordHash: string, label: string): Promise<number[]> {
  const firstId = await reserveIds(ctx.db, 'users_id_seq', count);
  const ids = Array.from({ length: count }, (_, i) => firstId + i);
  const firstNamespace = await reserveIds(ctx.db, 'namespaces_id_seq', count);
  await pool(ids, 8, async (id, i) => {
    const username = `${label}_${id}`;
    await userCommand(ctx, id, {
      type: 'CreateUser',
      id,
      namespaceId: firstNamespace + i,
      profile: { ...DEFAULT_PROFILE, name: `Bench ${id}`, username, email: `${username}@example.com` },
      passwordHash,
      confirmed: true,
      passwordResetRequired: false,
    } as UserCommand); // asserted: the users area is changing under the bench; extra fields are harmless
  });
  return ids;
}

/** Takes `count` consecutive ids from a sequence; returns the first. */
async function reserveIds(db: Db, sequence: string, count: number): Promise<number> {
  const { rows } = await sql<{ last: string }>`select setval(${sequence}, nextval(${sequence}) + ${count - 1}) as last`.execute(db);
  return Number(rows[0]!.last) - count + 1;
}

function userCommand(ctx: CommandContext, id: number, command: UserCommand) {
  return users.run(ctx, id, command, { actor_id: id, actor_username: 'bench', request_id: null });
}

interface AppendFigure {
  writers: number;
  streams: number;
  seconds: number;
  commands: number;
  eventsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  retriesPerCommand: number;
  statementsPerCommand: number;
  failures: number;
  cpu: CpuSplit;
}

async function appendLevel(ctx: CommandContext, counter: StatementCounter, writers: number, passwordHash: string): Promise<AppendFigure> {
  const perWriter = Math.max(1, Math.floor(APPEND_STREAMS / writers));
  const ids = await createUsersDirect(ctx, perWriter * writers, passwordHash, `append${writers}_${Date.now().toString(36)}`);
  const latencies: number[] = [];
  let events = 0;
  let failures = 0;
  const before = snapshotCounter(counter);
  const cpu = cpuMeter(undefined);
  const started = performance.now();
  const deadline = started + APPEND_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const mine = ids.slice(w * perWriter, (w + 1) * perWriter);
      for (let n = 0; performance.now() < deadline; n++) {
        const id = mine[n % mine.length]!;
        const t0 = performance.now();
        try {
          const result = await userCommand(ctx, id, { type: 'SetUserStatus', emoji: n % 2 ? 'coffee' : 'tea', message: `append ${n}`, messageHtml: `append ${n}` });
          events += result.events.length;
          latencies.push(performance.now() - t0);
        } catch {
          failures++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const figure: AppendFigure = {
    writers,
    streams: ids.length,
    seconds: round(seconds, 2),
    commands: latencies.length,
    eventsPerSecond: round(events / seconds),
    p50: round(percentile(latencies, 50), 2),
    p90: round(percentile(latencies, 90), 2),
    p99: round(percentile(latencies, 99), 2),
    retriesPerCommand: latencies.length ? round((counter.rollbacks - before.rollbacks) / latencies.length, 4) : 0,
    statementsPerCommand: latencies.length ? round((counter.statements - before.statements) / latencies.length, 2) : 0,
    failures,
    cpu: cpu(),
  };
  log(`  ${writers} writer(s) on ${ids.length} streams: ${figure.eventsPerSecond} events/s, p50 ${figure.p50} ms, p99 ${figure.p99} ms, ${figure.statementsPerCommand} stmts/cmd, retries/cmd ${figure.retriesPerCommand}, failures ${failures} (cpu cores: node ${figure.cpu.server}, postgres ${figure.cpu.postgres}, other ${figure.cpu.other})`);
  traceStatements('command', before, counter, latencies.length);
  return figure;
}

/**
 * Seeds user streams of 5 events (UserCreated + 4 × UserStatusSet) through appendToStream,
 * 500 streams per transaction, SEED_PARALLEL transactions at once. Log order:
 * - `streams` (default): each user's five events together, user after user — creations and
 *   updates alternate in the log, as when users come and go over time;
 * - `waves` (BENCH_SEED=waves): every creation first, then four waves of status changes —
 *   long runs of one kind, the friendliest order for batching.
 */
async function seedUserEvents(db: Db, users: number): Promise<{ events: number; seconds: number }> {
  if (users <= 0) return { events: 0, seconds: 0 };
  const first = await reserveIds(db, 'users_id_seq', users);
  const firstNamespace = await reserveIds(db, 'namespaces_id_seq', users);
  const chunk = 500;
  const chunks = Array.from({ length: Math.ceil(users / chunk) }, (_, i) => i);
  const metadata = { actor_id: 1, actor_username: 'root', request_id: null };
  const heads = new Map<number, { version: number; hash: string }>();
  const created = (id: number) => {
    const username = `seed_${id}`;
    // The real UserCreated shape (asserted, like the command above, to survive field additions).
    return {
      type: 'UserCreated',
      data: { ...DEFAULT_PROFILE, id, namespace_id: firstNamespace + (id - first), name: `Seed ${id}`, username, email: `${username}@example.com`, password_hash: null, confirmed: true, password_reset_required: false },
    } as UserEvent;
  };
  const status = (id: number, n: number): UserEvent => ({ type: 'UserStatusSet', data: { id, emoji: 'coffee', message: `status ${n}`, message_html: `status ${n}` } });
  const started = performance.now();
  let events = 0;
  const wave = (eventsOf: (id: number) => UserEvent[]) =>
    pool(chunks, SEED_PARALLEL, async (c) => {
      await db.transaction().execute(async (trx) => {
        for (let id = first + c * chunk; id < Math.min(first + (c + 1) * chunk, first + users); id++) {
          const head = heads.get(id);
          const stored = await appendToStream(trx, {
            streamId: userStreamId(id),
            expectedVersion: head?.version ?? 0,
            headHash: head?.hash ?? GENESIS_HASH,
            events: eventsOf(id).map((event) => ({ type: event.type, data: event.data, index: userEventIndex(event) })),
            metadata,
            occurredAt: new Date(),
          });
          heads.set(id, { version: stored.at(-1)!.streamVersion, hash: stored.at(-1)!.hash });
          events += stored.length;
        }
      });
    });
  if (SEED_ORDER === 'waves') {
    await wave((id) => [created(id)]);
    for (const n of [1, 2, 3, 4]) await wave((id) => [status(id, n)]);
  } else {
    await wave((id) => [created(id), ...[1, 2, 3, 4].map((n) => status(id, n))]);
  }
  return { events, seconds: (performance.now() - started) / 1000 };
}

/**
 * Baseline: replay every user event through the inline users projector's `apply`, one
 * event at a time, in ONE transaction, into empty copies of its tables (schema
 * bench_replay, search_path like the real rebuild), then throw the copies away.
 */
async function replayBaseline(db: Db, projector: Projector): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let events = 0;
  await db.transaction().execute(async (trx) => {
    await sql.raw('drop schema if exists bench_replay cascade').execute(trx);
    await sql.raw('create schema bench_replay').execute(trx);
    for (const table of projector.tables) await sql.raw(`create table bench_replay.${table} (like public.${table} including all)`).execute(trx);
    await sql`select set_config('search_path', 'bench_replay, public', true)`.execute(trx);
    let after = '0';
    for (;;) {
      const rows = await trx
        .selectFrom('events')
        .selectAll()
        .where('global_position', '>', after)
        .where('event_type', 'in', projector.handles)
        .orderBy('global_position')
        .limit(5000)
        .execute();
      for (const row of rows) await projector.apply(toStoredEvent(row), trx);
      events += rows.length;
      if (rows.length < 5000) break;
      after = rows.at(-1)!.global_position;
    }
    await sql.raw('drop schema bench_replay cascade').execute(trx);
  });
  return { events, seconds: (performance.now() - started) / 1000 };
}

/**
 * Ceiling of any rebuild: page through the user events in gap-free order (pages of 5000,
 * the columns a projector reads + toLoggedEvent, as rebuildProjections' bulk phase reads
 * them) without applying them.
 */
async function scanLog(db: Db, types: readonly string[]): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let events = 0;
  let after = { tx: '0', pos: '0' };
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select(PROJECTED_EVENT_COLUMNS)
      .where(sql<boolean>`(transaction_id, global_position) > (${after.tx}::xid8, ${after.pos}::bigint)`)
      .where('event_type', 'in', types)
      .orderBy('transaction_id')
      .orderBy('global_position')
      .limit(5000)
      .execute();
    const stored = rows.map(toLoggedEvent);
    events += stored.length;
    if (rows.length < 5000) break;
    after = { tx: stored.at(-1)!.transactionId, pos: stored.at(-1)!.globalPosition };
  }
  return { events, seconds: (performance.now() - started) / 1000 };
}

type RebuildFn = (
  handle: DatabaseHandle,
  projectors: readonly Projector[],
  opts?: { onProgress?: (done: number, total: number) => void },
) => Promise<{ events?: number } | void>;

/** src/projections/rebuild.ts is being written alongside the bench: load it only if it is there. */
async function loadRebuild(): Promise<RebuildFn | undefined> {
  const specifier = '../src/projections/rebuild.js';
  try {
    const module = (await import(specifier)) as { rebuildProjections?: RebuildFn };
    return typeof module.rebuildProjections === 'function' ? module.rebuildProjections : undefined;
  } catch (error) {
    log(`  (src/projections/rebuild.ts not usable: ${(error as Error).message.split('\n')[0]})`);
    return undefined;
  }
}

// ───────────────────────────── Group lists ─────────────────────────────

interface GroupListFigure extends HttpFigure {
  caller: 'admin' | 'member';
  path: string;
  /** X-Total of the answer (groups or projects the caller may see) and the rows of page 1. */
  total: number;
  rows: number;
  /** The same request at 1 connection (BENCH_UNLOADED_SECONDS): latency without queueing. */
  unloaded?: { rps: number; p50: number; p90: number; p99: number } | undefined;
}

interface GroupsFigures {
  seed: GroupSeed & { cpu: CpuSplit & { seeders: number }; users: number; usersSeconds: number; analyzeSeconds: number; catchUpSeconds: number; sealSeconds: number; logEvents: number };
  bare: HttpFigure & { unloaded?: { rps: number; p50: number; p90: number; p99: number } | undefined };
  lists: GroupListFigure[];
}

/**
 * GET /groups and GET /groups/:id/projects over BENCH_GROUPS groups and BENCH_PROJECTS
 * projects, as an administrator and as a regular user who is a member of BENCH_MEMBER_GROUPS
 * groups, interleaved with the bare one-SELECT route. Its own database and app (the other
 * phases, the rebuild above all, keep their log), dropped at the end of the phase.
 */
async function groupsPhase(gen: LoadGenerator, database: string, cleanups: (() => Promise<void> | void)[]): Promise<GroupsFigures> {
  const name = `${database}_groups`;
  await withAdmin((admin) => admin.query(`create database ${name}`));
  const dropDatabase = once(async () => {
    if (KEEP) return void log(`kept database ${name} (BENCH_KEEP=1): psql -h 127.0.0.1 -U postgres ${name}; drop it with \`dropdb -h 127.0.0.1 -U postgres ${name}\``);
    await withAdmin((admin) => admin.query(`drop database if exists ${name} with (force)`));
    log(`dropped database ${name}`);
  });
  cleanups.push(dropDatabase);
  const url = databaseUrl(SERVER_URL, name);
  const handle = await openDatabase({ databaseUrl: url, ...(POOL_SIZE ? { poolSize: POOL_SIZE } : {}) });
  const counter = countStatements(handle.pool!);
  const poolSize = handle.pool!.options.max ?? 10;
  const rootToken = `bench-root-${process.pid}-${Date.now().toString(36)}`;
  const config: Config = { ...loadConfig({}), port: 0, databaseUrl: url, logLevel: 'silent', rootToken };
  const runtime = await openRuntime(config, { handle, logger: pino({ level: 'silent' }), workers: WORKERS });
  const closeRuntime = once(() => runtime.close());
  cleanups.push(closeRuntime);
  const app = await listenLocal(createApp(runtime.app).fetch);
  const closeHttp = once(() => closeServer(app.server));
  cleanups.push(closeHttp);
  const base = `http://127.0.0.1:${app.port}`;
  (runtime.config as { externalUrl: string }).externalUrl = base;
  const barePool = new pg.Pool({ connectionString: url, max: poolSize });
  barePool.on('error', () => {});
  const closeBare = once(() => barePool.end());
  cleanups.push(closeBare);

  try {
    // The regular caller (over HTTP, with a token) and the users who own and join the groups.
    let started = performance.now();
    const [member] = await createUsersOverHttp(base, rootToken, 1);
    const memberName = (await sql<{ username: string }>`select username from users where id = ${member!.id}`.execute(handle.db)).rows[0]!.username;
    const label = `owner_${Date.now().toString(36)}`;
    const ownerIds = await createUsersDirect(runtime.app.commands, GROUP_USERS, await hashPassword('benchmark-password'), label);
    const owners: SeedUser[] = ownerIds.map((id) => ({ id, username: `${label}_${id}` }));
    const usersSeconds = (performance.now() - started) / 1000;
    log(`  ${GROUP_USERS} group owners/members through handleCommand, 1 regular user over HTTP: ${round(usersSeconds, 2)} s`);

    log(`  seeding ${GROUP_COUNT} groups and ${PROJECT_COUNT} projects (deciders → appendToStream → inline projectors; ${SEED_WORKERS} processes, ${SEED_PARALLEL} transactions at once)…`);
    const seedCpu = cpuMeter(undefined);
    const seed = await seedGroups(handle.db, url, {
      groups: GROUP_COUNT,
      projects: PROJECT_COUNT,
      users: owners,
      member: { id: member!.id, username: memberName },
      memberGroups: MEMBER_GROUPS,
      workers: SEED_WORKERS,
      parallel: SEED_PARALLEL,
      log,
    });
    // The seeding processes' CPU is in `other` (they are gone when the meter reads /proc): moved to `seeders`.
    const seedTicks = seedCpu();
    const seeders = round(seed.workersCpuSeconds / seed.seconds.total, 2);
    const seedCores = { ...seedTicks, seeders, other: round(Math.max(0, seedTicks.other - seeders), 2) };
    log(
      `  seeded ${seed.events} events in ${round(seed.seconds.total, 2)} s (groups ${round(seed.seconds.groups, 2)} s, projects ${round(seed.seconds.projects, 2)} s): ` +
        `${seed.groups} groups (${seed.topLevel} top-level, depth ≤ ${seed.maxDepth}), ${seed.projects} projects, ${seed.memberships} group memberships, the regular user in ${seed.memberOf}; ${seedCpuNote(seedCores)}`,
    );
    started = performance.now();
    // GIN indexes (traversal_ids) keep new entries in a pending list until it outgrows
    // gin_pending_list_limit or (auto)vacuum flushes it; ANALYZE alone leaves it (BENCH_GROUPS_VACUUM=1 flushes).
    await sql.raw(GROUPS_VACUUM ? 'vacuum analyze' : 'analyze').execute(handle.db);
    const analyzeSeconds = (performance.now() - started) / 1000;
    // The app's followers (reactors) and sealer would otherwise chew through the seeded log
    // during the measurements: bring both up to date first.
    started = performance.now();
    await runtime.worker?.waitUntilCaughtUp({ timeoutMs: 120_000 });
    const catchUpSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    await sealPending(handle.db);
    const sealSeconds = (performance.now() - started) / 1000;
    const logEvents = Number((await sql<{ n: string }>`select count(*) as n from events`.execute(handle.db)).rows[0]!.n);
    log(`  ${GROUPS_VACUUM ? 'vacuum analyze' : 'analyze'} ${round(analyzeSeconds, 2)} s, followers caught up ${round(catchUpSeconds, 2)} s, sealed ${round(sealSeconds, 2)} s; the log holds ${logEvents} events`);
    log(`  targets: group ${seed.group.id} ${seed.group.fullPath} (${seed.group.visibility}, ${seed.group.directProjects} projects of its own); subtree ${seed.subtree.id} ${seed.subtree.fullPath} (${seed.subtree.visibility}, ${seed.subtree.groups} groups, ${seed.subtree.subtreeProjects} projects)`);

    const callers = { admin: rootToken, member: member!.token };
    const lists: { caller: 'admin' | 'member'; path: string; name: string }[] = [];
    const memberLabel = `member of ${seed.memberOf}`;
    for (const [route, path] of [
      ['GET /groups', '/api/v4/groups'],
      [`GET /groups/:id/projects (${seed.group.directProjects} own)`, `/api/v4/groups/${seed.group.id}/projects?include_subgroups=false`],
      [`GET /groups/:id/projects subtree (${seed.subtree.groups} groups)`, `/api/v4/groups/${seed.subtree.id}/projects?include_subgroups=true`],
    ] as const) {
      lists.push({ caller: 'admin', path, name: `${route}, admin` });
      lists.push({ caller: 'member', path, name: `${route}, ${memberLabel}` });
    }

    // One request each first: it must answer 200; its X-Total says what the caller sees.
    const answers = new Map<string, { total: number; rows: number }>();
    for (const l of lists) {
      counter.capture = EXPLAIN ? [] : undefined;
      const response = await fetch(`${base}${l.path}`, { headers: { 'PRIVATE-TOKEN': callers[l.caller] } });
      const captured = counter.capture ?? [];
      counter.capture = undefined;
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${l.name}: ${response.status} ${body.slice(0, 300)}`);
      const answer = { total: Number(response.headers.get('x-total') ?? NaN), rows: (JSON.parse(body) as unknown[]).length };
      answers.set(l.name, answer);
      log(`  ${l.name}: X-Total ${answer.total}, ${answer.rows} rows on page 1, ${body.length} bytes`);
      if (EXPLAIN) await explainStatements(barePool, captured);
    }

    const bareApp = await listenLocal(bareReadApp(barePool).fetch);
    const bareUsers = [1, member!.id, ...ownerIds.slice(0, Math.max(0, CONNECTIONS - 2))];
    const scenarios: Scenario[] = [
      {
        name: 'bare GET /users/:id (1 SELECT)',
        job: { url: `http://127.0.0.1:${bareApp.port}`, requests: bareUsers.map((id) => ({ method: 'GET', path: `/users/${id}` })) },
        traffic: bareApp.traffic,
        pool: barePool,
      },
      ...lists.map(
        (l): Scenario => ({
          name: l.name,
          job: { url: base, requests: [{ method: 'GET', path: l.path, headers: { 'PRIVATE-TOKEN': callers[l.caller] } }] },
          traffic: app.traffic,
          pool: handle.pool!,
          counter,
        }),
      ),
    ];
    log(`  group lists (interleaved slices of ${GROUP_SLICE_SECONDS} s, ${CONNECTIONS} connections)…`);
    const figures = await compareScenarios(gen, scenarios, GROUP_SLICE_SECONDS);
    // The same requests one at a time: latency without the queue of 50 connections.
    const unloaded: ({ rps: number; p50: number; p90: number; p99: number } | undefined)[] = [];
    if (UNLOADED_SECONDS > 0) {
      log(`  the same at 1 connection, ${UNLOADED_SECONDS} s each…`);
      for (const s of scenarios) {
        const r = await gen.run({ ...s.job, connections: 1, seconds: UNLOADED_SECONDS });
        await drained(s.traffic);
        const u = { rps: round(r.rps, r.rps < 10 ? 1 : 0), p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99 };
        log(`    ${s.name}: ${u.rps} req/s, p50 ${u.p50} ms, p90 ${u.p90} ms, p99 ${u.p99} ms`);
        unloaded.push(u);
      }
    }
    await closeServer(bareApp.server);
    return {
      seed: { ...seed, cpu: seedCores, users: GROUP_USERS + 1, usersSeconds, analyzeSeconds, catchUpSeconds, sealSeconds, logEvents },
      bare: { ...figures[0]!, unloaded: unloaded[0] },
      lists: lists.map((l, i) => ({ ...figures[i + 1]!, caller: l.caller, path: l.path, ...answers.get(l.name)!, unloaded: unloaded[i + 1] })),
    };
  } finally {
    await closeHttp();
    await closeRuntime();
    await closeBare();
    await dropDatabase();
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of the SELECTs a request sent (BENCH_EXPLAIN=1), to stderr. */
async function explainStatements(pool: pg.Pool, statements: { text: string; values: unknown[] }[]) {
  for (const { text, values } of statements) {
    if (!/^\s*(select|with)\b/i.test(text)) continue;
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${text}`, values);
    log(`    ── ${text.replace(/\s+/g, ' ').trim().slice(0, 400)}${text.length > 400 ? '…' : ''}`);
    log(`       parameters ${JSON.stringify(values).slice(0, 300)}`);
    for (const row of rows) log(`       ${row['QUERY PLAN']}`);
  }
}

// ───────────────────────────── Main ─────────────────────────────

interface Figures {
  reads?: { bare: HttpFigure; usersById: HttpFigure; currentUser: HttpFigure; twoSelects?: HttpFigure };
  writes?: { bare: HttpFigure; userStatus: HttpFigure; lean?: HttpFigure };
  groups?: GroupsFigures;
  appends?: AppendFigure[];
  rebuild?: {
    logEvents: number;
    seed: { events: number; seconds: number };
    scan?: { events: number; seconds: number };
    baseline?: { events: number; seconds: number; statementsPerEvent: number; cpu: CpuSplit };
    rebuildProjections?: { events: number; seconds: number; projectors: string[]; statementsPerEvent: number; cpu: CpuSplit };
  };
  memory?: MemoryFigures;
}

async function main() {
  const totalStarted = performance.now();
  const database = `forgelog_bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  const url = databaseUrl(SERVER_URL, database);
  const cleanups: (() => Promise<void> | void)[] = [];
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
    const serverVersion = await withAdmin(async (admin) => {
      await admin.query(`create database ${database}`);
      return (await admin.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
    });
    cleanups.push(async () => {
      if (KEEP) {
        log(`kept database ${database} (BENCH_KEEP=1)`);
        return;
      }
      await withAdmin((admin) => admin.query(`drop database if exists ${database} with (force)`));
      log(`dropped database ${database}`);
    });
    log(`database ${database} on ${new URL(SERVER_URL).host} (PostgreSQL ${serverVersion}); phases: ${[...PHASES].join(', ')}`);

    // The app, on its own pool (sized like openRuntime's default) with a statement counter;
    // openRuntime's defaults otherwise (migrations, bootstrap, in-process workers, like `forgelog serve`).
    const handle = await openDatabase({ databaseUrl: url, ...(POOL_SIZE ? { poolSize: POOL_SIZE } : {}) });
    const appStatements = countStatements(handle.pool!);
    const poolSize = handle.pool!.options.max ?? 10;
    const rootToken = `bench-root-${process.pid}-${Date.now().toString(36)}`;
    const config: Config = { ...loadConfig({}), port: 0, databaseUrl: url, logLevel: 'silent', rootToken };
    const runtime: Runtime = await openRuntime(config, { handle, logger: pino({ level: 'silent' }), workers: WORKERS });
    const closeRuntime = once(() => runtime.close());
    cleanups.push(closeRuntime);
    // listen() binds 0.0.0.0; the bench stays on loopback with the same app (createApp is what listen serves).
    const app = createApp(runtime.app);
    const { server, port, traffic: appTraffic } = await listenLocal(app.fetch);
    const closeHttp = once(() => closeServer(server));
    cleanups.push(closeHttp);
    const closeApp = async () => {
      await closeHttp();
      await closeRuntime();
    };
    const base = `http://127.0.0.1:${port}`;
    (runtime.config as { externalUrl: string }).externalUrl = base;

    const barePool = new pg.Pool({ connectionString: url, max: poolSize });
    barePool.on('error', () => {}); // idle clients die when the database is dropped
    cleanups.push(async () => {
      if (barePool.totalCount > barePool.idleCount) log(`bare pool: ${barePool.totalCount - barePool.idleCount} clients still checked out at the end`);
      await barePool.end();
    });
    await barePool.query('create table bench_scratch (id bigint generated always as identity primary key, user_id integer not null, payload jsonb not null, created_at timestamptz not null default now())');

    const gen = await LoadGenerator.start();
    cleanups.push(() => gen.stop());
    rssAfter('setup');

    const figures: Figures = {};
    let users: BenchUser[] = [];
    if (PHASES.has('reads') || PHASES.has('writes')) {
      log(`creating ${USERS} users with tokens over HTTP…`);
      users = await createUsersOverHttp(base, rootToken, USERS);
      rssAfter('users');
    }

    // 1. Reads: bare, GET /users/:id, GET /user, interleaved.
    if (PHASES.has('reads')) {
      log(`reads (interleaved slices of ${SLICE_SECONDS} s)…`);
      const bareRead = await listenLocal(bareReadApp(barePool).fetch);
      const twoSelect = WHATIF ? await listenLocal(twoSelectApp(barePool).fetch) : undefined;
      const scenarios: Scenario[] = [
        {
          name: 'bare GET /users/:id (1 SELECT)',
          job: { url: `http://127.0.0.1:${bareRead.port}`, requests: users.map((u) => ({ method: 'GET', path: `/users/${u.id}` })) },
          traffic: bareRead.traffic,
          pool: barePool,
        },
        {
          name: 'GET /api/v4/users/:id',
          job: { url: base, requests: users.map((u) => ({ method: 'GET', path: `/api/v4/users/${u.id}`, headers: { 'PRIVATE-TOKEN': u.token } })) },
          traffic: appTraffic,
          pool: handle.pool!,
          counter: appStatements,
        },
        {
          name: 'GET /api/v4/user',
          job: { url: base, requests: users.map((u) => ({ method: 'GET', path: '/api/v4/user', headers: { 'PRIVATE-TOKEN': u.token } })) },
          traffic: appTraffic,
          pool: handle.pool!,
          counter: appStatements,
        },
      ];
      if (twoSelect) {
        scenarios.push({
          name: "what-if: /user's 2 SELECTs, bare",
          job: { url: `http://127.0.0.1:${twoSelect.port}`, requests: users.map((u) => ({ method: 'GET', path: '/user', headers: { 'PRIVATE-TOKEN': u.token } })) },
          traffic: twoSelect.traffic,
          pool: barePool,
        });
      }
      const [bare, usersById, currentUser, twoSelects] = await compareScenarios(gen, scenarios);
      await closeServer(bareRead.server);
      if (twoSelect) await closeServer(twoSelect.server);
      figures.reads = { bare: bare!, usersById: usersById!, currentUser: currentUser!, ...(twoSelects ? { twoSelects } : {}) };
      rssAfter('reads');
    }

    // 2. Writes: bare transaction vs PUT /user/status, interleaved.
    if (PHASES.has('writes')) {
      log(`writes (interleaved slices of ${SLICE_SECONDS} s)…`);
      // A fresh message per request: an unchanged status appends nothing (GitLab semantics).
      const statusBody = JSON.stringify({ emoji: 'coffee', message: 'benchmarking <forgelog> [<id>]' });
      const json = { 'content-type': 'application/json' };
      const bareWrite = await listenLocal(bareWriteApp(barePool).fetch);
      const leanWrite = WHATIF ? await listenLocal(leanWriteApp(barePool).fetch) : undefined;
      const scenarios: Scenario[] = [
        {
          name: 'bare BEGIN/INSERT/COMMIT',
          job: { url: `http://127.0.0.1:${bareWrite.port}`, idReplacement: true, requests: users.map((u) => ({ method: 'PUT', path: `/users/${u.id}/status`, headers: json, body: statusBody })) },
          traffic: bareWrite.traffic,
          pool: barePool,
        },
        {
          name: 'PUT /api/v4/user/status',
          job: { url: base, idReplacement: true, requests: users.map((u) => ({ method: 'PUT', path: '/api/v4/user/status', headers: { ...json, 'PRIVATE-TOKEN': u.token }, body: statusBody })) },
          traffic: appTraffic,
          pool: handle.pool!,
          counter: appStatements,
          countEvents: () => countEvents(handle.db, 'UserStatusSet'),
        },
      ];
      if (leanWrite) {
        scenarios.push({
          name: 'what-if: same SQL, 6 stmts, 1 checkout',
          job: { url: `http://127.0.0.1:${leanWrite.port}`, idReplacement: true, requests: users.map((u) => ({ method: 'PUT', path: '/user/status', headers: { ...json, 'PRIVATE-TOKEN': u.token }, body: statusBody })) },
          traffic: leanWrite.traffic,
          pool: barePool,
          countEvents: () => countEvents(handle.db, 'UserStatusSet'),
        });
      }
      const [bare, userStatus, lean] = await compareScenarios(gen, scenarios);
      await closeServer(bareWrite.server);
      if (leanWrite) await closeServer(leanWrite.server);
      figures.writes = { bare: bare!, userStatus: userStatus!, ...(lean ? { lean } : {}) };
      rssAfter('writes');
    }

    // 3. Group lists: their own database with BENCH_GROUPS groups and BENCH_PROJECTS projects.
    if (PHASES.has('groups')) {
      log(`group lists: ${GROUP_COUNT} groups, ${PROJECT_COUNT} projects in database ${database}_groups…`);
      figures.groups = await groupsPhase(gen, database, cleanups);
      rssAfter('groups');
    }

    // 4. Appends through handleCommand
    if (PHASES.has('appends')) {
      log(`appends through handleCommand (${APPEND_SECONDS} s per level)…`);
      const passwordHash = await hashPassword('benchmark-password');
      figures.appends = [];
      for (const writers of WRITER_LEVELS) figures.appends.push(await appendLevel(runtime.app.commands, appStatements, writers, passwordHash));
      rssAfter('appends');
    }

    // 5. Rebuild
    if (PHASES.has('rebuild')) {
      // Like `forgelog rebuild`: on its own, without the serve process's workers and sealer
      // following the log meanwhile.
      log('rebuild: closing the HTTP app and its workers; seeding and rebuilding on a fresh pool…');
      await closeApp();
      const rebuildHandle = await openDatabase({ databaseUrl: url });
      cleanups.push(once(() => rebuildHandle.close()));
      const rebuildStatements = countStatements(rebuildHandle.pool!);
      const handled = usersProjector.handles;
      const countHandled = async () =>
        Number((await sql<{ n: string }>`select count(*) as n from events where event_type in (${sql.join(handled)})`.execute(rebuildHandle.db)).rows[0]!.n);
      const existing = await countHandled();
      const seedUsers = Math.max(0, Math.ceil((REBUILD_EVENTS - existing) / 5));
      log(`rebuild: seeding ${seedUsers} user streams × 5 events (log holds ${existing} user events)…`);
      const seed = await seedUserEvents(rebuildHandle.db, seedUsers);
      await sql`analyze events`.execute(rebuildHandle.db);
      const logEvents = await countHandled();
      log(`  seeded ${seed.events} events in ${round(seed.seconds, 2)} s; log holds ${logEvents} user events`);
      figures.rebuild = { logEvents, seed };
      rssAfter('seed');

      const scan = await scanLog(rebuildHandle.db, handled);
      log(`  log scan: ${scan.events} events in ${round(scan.seconds, 2)} s`);
      figures.rebuild.scan = scan;

      const rebuildProjections = await loadRebuild();
      if (!rebuildProjections || env.BENCH_BASELINE === '1') {
        log('  baseline: replay through usersProjector.apply, one transaction…');
        const before = snapshotCounter(rebuildStatements);
        const cpu = cpuMeter(undefined);
        const replayed = await replayBaseline(rebuildHandle.db, usersProjector);
        const baseline = { ...replayed, statementsPerEvent: round((rebuildStatements.statements - before.statements) / Math.max(1, replayed.events), 3), cpu: cpu() };
        log(`  baseline: ${baseline.events} events in ${round(baseline.seconds, 2)} s, ${baseline.statementsPerEvent} stmts/event`);
        traceStatements('replayed event', before, rebuildStatements, replayed.events);
        figures.rebuild.baseline = baseline;
        rssAfter('replay baseline');
      }
      if (rebuildProjections) {
        const projectors = PROJECTORS.filter((p) => p.tables.length > 0);
        log(`  rebuildProjections(${projectors.map((p) => p.name).join(', ')})…`);
        let lastProgress = performance.now();
        let progressed = 0;
        const before = snapshotCounter(rebuildStatements);
        const cpu = cpuMeter(undefined);
        const started = performance.now();
        const result = await rebuildProjections(rebuildHandle, projectors, {
          onProgress: (done, total) => {
            progressed = done;
            if (performance.now() - lastProgress > 5000) {
              lastProgress = performance.now();
              log(`    ${done}/${total}`);
            }
          },
        });
        const seconds = (performance.now() - started) / 1000;
        const events = (result && typeof result.events === 'number' ? result.events : progressed) || logEvents;
        const statementsPerEvent = round((rebuildStatements.statements - before.statements) / Math.max(1, events), 3);
        figures.rebuild.rebuildProjections = { events, seconds, projectors: projectors.map((p) => p.name), statementsPerEvent, cpu: cpu() };
        log(`  rebuildProjections: ${events} events in ${round(seconds, 2)} s, ${statementsPerEvent} stmts/event`);
        traceStatements('replayed event', before, rebuildStatements, events);
        rssAfter('rebuild');
      } else {
        log('  rebuildProjections not available: only the baseline is reported');
      }
    }

    if (PHASES.has('memory')) figures.memory = await measureMemory({ serverUrl: SERVER_URL, database: `${database}_memory` });

    await cleanup();
    report(figures, { serverVersion, poolSize, totalSeconds: round((performance.now() - totalStarted) / 1000, 1) });
  } finally {
    await cleanup();
  }
}

const cpuNote = (c: CpuSplit) => `cpu node/loadgen/pg/other ${c.server}/${c.loadgen}/${c.postgres}/${c.other}`;
const seedCpuNote = (c: CpuSplit & { seeders: number }) => `cpu node/seeders/pg/other ${c.server}/${c.seeders}/${c.postgres}/${c.other}`;

function report(figures: Figures, run: { serverVersion: string; poolSize: number; totalSeconds: number }) {
  const maxRssMb = mb(process.resourceUsage().maxRSS * 1024);
  const ratio = (a: number, b: number) => round((a / b) * 100, 1);
  const perSecond = (events: number, seconds: number) => (seconds > 0 ? round(events / seconds) : 0);
  type Row = string | string[]; // a string is a section heading or a note spanning the table
  const rows: Row[] = [];
  const httpRow = (f: HttpFigure, vs: HttpFigure | undefined, target: string, extra: string[] = []) =>
    rows.push([
      f.name,
      String(f.rps),
      ...(f.requests > 0 ? [f.p50.toFixed(1), f.p90.toFixed(1), f.p99.toFixed(1)] : ['—', '—', '—']),
      vs ? `${ratio(f.rps, vs.rps)}%` : '',
      target,
      [
        f.statementsPerRequest !== undefined ? `${f.statementsPerRequest} stmts/req` : '',
        ...extra,
        `${f.serverCpuUsPerRequest} µs node cpu/req`,
        `${f.poolWaiting} pool waiters`,
        cpuNote(f.cpu),
        f.non2xx ? `NON-2XX ${f.non2xx} ${JSON.stringify(f.statusCodes)}` : '',
        f.errors ? `ERRORS ${f.errors}${f.timeouts ? ` (${f.timeouts} timeouts of 10 s)` : ''}` : '',
        f.requests === 0 ? `NOTHING ANSWERED within the ${f.sliceSeconds} s slices` : f.requests < 20 ? `only ${f.requests} answers: rough percentiles` : '',
      ]
        .filter(Boolean)
        .join(', '),
    ]);
  const { reads, writes, groups, appends, rebuild } = figures;
  if (reads) {
    rows.push('1. Reads — requests/s (autocannon; connection i uses user i: its token, its id)');
    httpRow(reads.bare, undefined, '');
    httpRow(reads.usersById, reads.bare, '>= 60%');
    httpRow(reads.currentUser, reads.bare, '>= 60%');
    if (reads.twoSelects) httpRow(reads.twoSelects, reads.bare, '', ['not the app: BENCH_WHATIF']);
  }
  if (writes) {
    rows.push('2. Writes — requests/s (connection i writes as user i: writers never share a stream)');
    httpRow(writes.bare, undefined, '');
    httpRow(writes.userStatus, writes.bare, '>= 50%', [`${writes.userStatus.eventsPerRequest} events/req`, `retries/req ${writes.userStatus.retriesPerRequest}`]);
    if (writes.lean) httpRow(writes.lean, writes.bare, '', [`${writes.lean.eventsPerRequest} events/req`, 'not the app: BENCH_WHATIF']);
  }
  if (groups) {
    const { seed, bare, lists } = groups;
    rows.push(
      `3. Group lists — requests/s (${seed.groups} groups, ${seed.projects} projects, ${seed.memberships} group memberships; page 1 of 20; ` +
        `admin = root, member = a regular user in ${seed.memberOf} groups; ${CONNECTIONS} connections in ${lists[0]?.sliceSeconds ?? GROUP_SLICE_SECONDS} s slices, then 1)`,
    );
    const unloadedRow = (name: string, u: { rps: number; p50: number; p90: number; p99: number } | undefined, note: string) => {
      if (u) rows.push([`  ${name}`, String(u.rps), u.p50.toFixed(1), u.p90.toFixed(1), u.p99.toFixed(1), '', '', note]);
    };
    httpRow(bare, undefined, '');
    unloadedRow('└ at 1 connection', bare.unloaded, '');
    for (const l of lists) {
      httpRow(l, bare, '', [`X-Total ${l.total}`]);
      unloadedRow('└ at 1 connection', l.unloaded, '');
    }
    rows.push([
      'seed: deciders → appendToStream → inline projectors',
      String(perSecond(seed.events, seed.seconds.total)),
      '',
      '',
      '',
      '',
      '',
      `${seed.events} events in ${round(seed.seconds.total, 1)} s (groups + members ${round(seed.seconds.groups, 1)} s, projects ${round(seed.seconds.projects, 1)} s), ${seed.workers} processes, ${SEED_PARALLEL} transactions at once; ` +
        `${seedCpuNote(seed.cpu)}; then ${GROUPS_VACUUM ? 'vacuum analyze' : 'analyze'} ${round(seed.analyzeSeconds, 1)} s, followers ${round(seed.catchUpSeconds, 1)} s, sealing ${round(seed.sealSeconds, 1)} s; ${seed.users} users by handleCommand/HTTP ${round(seed.usersSeconds, 1)} s`,
    ]);
    rows.push(
      `   targets: group ${seed.group.id} (${seed.group.visibility}, ${seed.group.directProjects} projects of its own), ` +
        `subtree of top-level group ${seed.subtree.id} (${seed.subtree.visibility}, ${seed.subtree.groups} groups, ${seed.subtree.subtreeProjects} projects); ` +
        `${seed.topLevel} top-level groups, depth <= ${seed.maxDepth}`,
    );
  }
  if (appends) {
    rows.push(`4. Appends through handleCommand — events/s (SetUserStatus = 1 event per command, ${APPEND_SECONDS} s per level; p50/p90/p99 per command)`);
    for (const a of appends) {
      rows.push([
        `${a.writers} writer${a.writers === 1 ? '' : 's'} on ${a.streams} streams`,
        String(a.eventsPerSecond),
        a.p50.toFixed(1),
        a.p90.toFixed(1),
        a.p99.toFixed(1),
        '',
        '',
        `${a.statementsPerCommand} stmts/cmd, ${a.commands} commands, retries/cmd ${a.retriesPerCommand}, failures ${a.failures}, ${cpuNote(a.cpu)}`,
      ]);
    }
  }
  if (rebuild) {
    rows.push(`5. Rebuild — events/s (the log holds ${rebuild.logEvents} user events)`);
    const { seed, scan, baseline, rebuildProjections: real } = rebuild;
    rows.push([
      SEED_ORDER === 'waves' ? 'seed: appendToStream, in waves' : 'seed: appendToStream, 5-event streams',
      String(perSecond(seed.events, seed.seconds)),
      '',
      '',
      '',
      '',
      '',
      `${seed.events} events in ${round(seed.seconds, 2)} s, ${SEED_PARALLEL} parallel transactions of 500 streams, log order: ${SEED_ORDER === 'waves' ? 'all creations, then 4 waves of status changes' : "each user's 5 events together"}`,
    ]);
    if (scan) rows.push(['ceiling: read the log in pages, no apply', String(perSecond(scan.events, scan.seconds)), '', '', '', '', '', `${scan.events} events in ${round(scan.seconds, 2)} s (projected columns + toLoggedEvent, pages of 5000)`]);
    if (baseline) rows.push(['baseline: apply() per event, 1 trx', String(perSecond(baseline.events, baseline.seconds)), '', '', '', '', '>= 50k', `${baseline.events} events in ${round(baseline.seconds, 2)} s, ${baseline.statementsPerEvent} stmts/event, ${cpuNote(baseline.cpu)}`]);
    if (real) rows.push([`rebuildProjections(${real.projectors.join(', ')})`, String(perSecond(real.events, real.seconds)), '', '', '', '', '>= 50k', `${real.events} events in ${round(real.seconds, 2)} s, ${real.statementsPerEvent} stmts/event, ${cpuNote(real.cpu)}`]);
  }
  rows.push('6. RSS of this process (app + bare servers; the load generator is a separate process)');
  rows.push(`   ${memory.phases.map((p) => `${p.phase} ${p.rssMb}`).join(' | ')} MB`);
  rows.push(`   peak ${mb(memory.peakSampled)} MB (sampled every 50 ms); kernel maxRSS ${maxRssMb} MB`);
  if (figures.memory) rows.push(...memoryRows(figures.memory));

  const header = ['scenario', 'rate', 'p50 ms', 'p90 ms', 'p99 ms', 'vs bare', 'target', 'notes'];
  const cells = rows.filter((r): r is string[] => Array.isArray(r));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : i === 7 ? c : c.padStart(widths[i]!))).join('  ').trimEnd();
  const http = [reads?.bare, reads?.usersById, reads?.currentUser, writes?.bare, writes?.userStatus, groups?.bare, ...(groups?.lists ?? [])].filter((f): f is HttpFigure => f !== undefined);
  const noisy = [...http.map((f) => [f.name, f.cpu.other] as const), ...(appends ?? []).map((a) => [`${a.writers} writers`, a.cpu.other] as const)]
    .filter(([, other]) => other > 0.2)
    .map(([name, other]) => `${name} (${other})`);
  const out: string[] = [
    '',
    `forgelog bench — ${availableParallelism()} cores, node ${process.version}, PostgreSQL ${run.serverVersion}; ${SECONDS} s per HTTP scenario (+${WARMUP_SECONDS} s warm-up) in interleaved ${SLICE_SECONDS} s slices, ${CONNECTIONS} connections, app pool ${run.poolSize} = bare pool ${run.poolSize}`,
    `app: openRuntime defaults${WORKERS ? ' (in-process async workers on, as `forgelog serve`)' : ', in-process async workers OFF (BENCH_WORKERS=0)'}; load generator: autocannon in a child process; bare servers: this process, own port, own pg.Pool, app idle meanwhile; all on 127.0.0.1`,
    line(header),
    line(header.map((_, i) => '-'.repeat(widths[i]!))),
    ...rows.map((r) => (typeof r === 'string' ? r : line(r))),
  ];
  if (noisy.length > 0) out.push(`NOTE: other processes on the machine used CPU (cores) during: ${noisy.join('; ')} — ratios are less reliable`);
  out.push(`total ${run.totalSeconds} s`);
  process.stdout.write(`${out.join('\n')}\n`);

  const json = {
    when: new Date().toISOString(),
    machine: { cores: availableParallelism(), node: process.version, postgres: run.serverVersion },
    settings: { workers: WORKERS, seconds: SECONDS, sliceSeconds: SLICE_SECONDS, warmupSeconds: WARMUP_SECONDS, appendSeconds: APPEND_SECONDS, connections: CONNECTIONS, users: USERS, poolSize: run.poolSize, rebuildEvents: REBUILD_EVENTS, seedOrder: SEED_ORDER, seedParallel: SEED_PARALLEL, groups: GROUP_COUNT, projects: PROJECT_COUNT, groupUsers: GROUP_USERS, memberGroups: MEMBER_GROUPS, unloadedSeconds: UNLOADED_SECONDS, groupSliceSeconds: GROUP_SLICE_SECONDS, groupsVacuum: GROUPS_VACUUM, seedWorkers: SEED_WORKERS, phases: [...PHASES] },
    reads: reads && {
      bare: reads.bare,
      usersById: { ...reads.usersById, ratioToBare: ratio(reads.usersById.rps, reads.bare.rps) },
      currentUser: { ...reads.currentUser, ratioToBare: ratio(reads.currentUser.rps, reads.bare.rps) },
      ...(reads.twoSelects ? { whatIfTwoSelects: { ...reads.twoSelects, ratioToBare: ratio(reads.twoSelects.rps, reads.bare.rps) } } : {}),
    },
    writes: writes && {
      bare: writes.bare,
      userStatus: { ...writes.userStatus, ratioToBare: ratio(writes.userStatus.rps, writes.bare.rps) },
      ...(writes.lean ? { whatIfLean: { ...writes.lean, ratioToBare: ratio(writes.lean.rps, writes.bare.rps) } } : {}),
    },
    groups: groups && {
      seed: { ...groups.seed, eventsPerSecond: perSecond(groups.seed.events, groups.seed.seconds.total) },
      bare: groups.bare,
      lists: groups.lists.map((l) => ({ ...l, ratioToBare: ratio(l.rps, groups.bare.rps) })),
    },
    appends,
    rebuild: rebuild && {
      logEvents: rebuild.logEvents,
      seed: { ...rebuild.seed, seconds: round(rebuild.seed.seconds, 2), eventsPerSecond: perSecond(rebuild.seed.events, rebuild.seed.seconds) },
      scan: rebuild.scan && { ...rebuild.scan, seconds: round(rebuild.scan.seconds, 2), eventsPerSecond: perSecond(rebuild.scan.events, rebuild.scan.seconds) },
      baseline: rebuild.baseline && { ...rebuild.baseline, seconds: round(rebuild.baseline.seconds, 2), eventsPerSecond: perSecond(rebuild.baseline.events, rebuild.baseline.seconds) },
      rebuildProjections: rebuild.rebuildProjections && {
        ...rebuild.rebuildProjections,
        seconds: round(rebuild.rebuildProjections.seconds, 2),
        eventsPerSecond: perSecond(rebuild.rebuildProjections.events, rebuild.rebuildProjections.seconds),
      },
    },
    rss: { phasesMb: memory.phases, peakSampledMb: mb(memory.peakSampled), maxRssMb },
    memory: figures.memory && { ...figures.memory, targets: MEMORY_TARGETS },
    totalSeconds: run.totalSeconds,
  };
  process.stdout.write(`${JSON.stringify(json)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`bench failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);
