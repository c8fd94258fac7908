/**
 * `as_of` on one resource (issue 25; bench/README.md, "As of", docs/log-evidence.md): a user
 * whose stream holds BENCH_AS_OF_EVENTS (10,000) events, written through the users aggregate
 * (SetUserStatus commands, one event each, as `PUT /user/status` writes them), then
 * `GET /users/:id/status?as_of=<position>` over HTTP as root at a few positions of that
 * stream: the first read of a position (which builds its view, src/projections/as-of.ts) and
 * the reads after it. Every answer is checked against the status the stream held there.
 * Target: the first read under 50 ms.
 */
import { sql } from 'kysely';
import { hashPassword } from '../src/security/secrets.js';
import { startApp } from './harness/app.js';
import { log, percentile, round } from './harness/meters.js';
import { createDatabase, type Cleanups } from './harness/setup.js';
import type { Row } from './harness/table.js';
import { createUsersDirect, userCommand } from './harness/users.js';

const num = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number(v));
export const AS_OF_EVENTS = num(process.env.BENCH_AS_OF_EVENTS, 10_000);
const TARGET_MS = 50;
const WARM_READS = 30;

export interface AsOfFigures {
  /** Events in the user's stream; the log holds `logEvents` in all. */
  events: number;
  logEvents: number;
  seedSeconds: number;
  /** The process's first as_of read (at the stream's first status): it makes its view's tables itself. */
  firstOfProcess: { ms: number; nodeCpuMs: number };
  reads: { name: string; position: string; streamVersion: number; firstMs: number; firstNodeCpuMs: number; warmP50: number; warmP90: number }[];
}

export async function measureAsOf(database: string, cleanups: Cleanups): Promise<AsOfFigures> {
  const { url, drop } = await createDatabase(database, cleanups);
  const app = await startApp(url, cleanups);
  try {
    const ctx = app.runtime.app.commands;
    const [id] = await createUsersDirect(ctx, 1, await hashPassword('benchmark-password'), 'asof');
    log(`as_of: ${AS_OF_EVENTS} SetUserStatus commands on user ${id}'s stream…`);
    const started = performance.now();
    // The position of the n-th status (1-based) of the stream.
    const positions: string[] = [];
    for (let n = 1; n <= AS_OF_EVENTS; n++) {
      const result = await userCommand(ctx, id!, { type: 'SetUserStatus', emoji: 'coffee', message: `status ${n}`, messageHtml: `status ${n}` });
      if (result.events.length !== 1) throw new Error(`as_of bench: status ${n} appended ${result.events.length} events`);
      positions.push(result.events[0]!.globalPosition);
    }
    const seedSeconds = (performance.now() - started) / 1000;
    await app.runtime.worker?.waitUntilCaughtUp({ timeoutMs: 120_000 });
    await sql`analyze`.execute(app.handle.db);
    const logEvents = Number((await sql<{ n: string }>`select count(*) as n from events`.execute(app.handle.db)).rows[0]!.n);
    log(`as_of: seeded in ${round(seedSeconds, 1)} s (the log holds ${logEvents} events)`);

    const get = async (position: string, n: number) => {
      const t0 = performance.now();
      const response = await fetch(`${app.base}/api/v4/users/${id}/status?as_of=${position}`, { headers: { 'PRIVATE-TOKEN': app.rootToken } });
      const body = (await response.json()) as { message?: string };
      const ms = performance.now() - t0;
      if (response.status !== 200 || body.message !== `status ${n}`) throw new Error(`as_of bench: at ${position} (status ${n}) answered ${response.status} ${JSON.stringify(body)}`);
      return ms;
    };
    const asOf = app.runtime.app.asOf;
    // The process's first as_of read makes its view's tables itself (seconds of DDL); each build
    // then makes the next one's in the background, awaited here between the reads as an
    // auditor's pauses would.
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await get(positions[0]!, 1);
    const used0 = process.cpuUsage(cpu0);
    const firstOfProcess = { ms: round(performance.now() - t0, 1), nodeCpuMs: round((used0.user + used0.system) / 1000, 1) };
    log(`as_of: the process's first as_of read (its tables made by the build): ${firstOfProcess.ms} ms (node cpu ${firstOfProcess.nodeCpuMs} ms)`);
    const reads: AsOfFigures['reads'] = [];
    for (const [name, n] of [
      ['the stream’s last event', AS_OF_EVENTS],
      ['its middle', Math.ceil(AS_OF_EVENTS / 2)],
      ['its second status', 2],
      ['the last but one', AS_OF_EVENTS - 1],
    ] as const) {
      const position = positions[n - 1]!;
      await asOf.spareMade();
      const cpu = process.cpuUsage();
      const firstMs = await get(position, n);
      const used = process.cpuUsage(cpu);
      const firstNodeCpuMs = round((used.user + used.system) / 1000, 1);
      const warm: number[] = [];
      for (let i = 0; i < WARM_READS; i++) warm.push(await get(position, n));
      warm.sort((a, b) => a - b);
      const figure = { name, position, streamVersion: n + 1, firstMs: round(firstMs, 1), firstNodeCpuMs, warmP50: round(percentile(warm, 50), 2), warmP90: round(percentile(warm, 90), 2) };
      log(`as_of ${name} (position ${position}): first read ${figure.firstMs} ms (node cpu ${firstNodeCpuMs} ms), then p50 ${figure.warmP50} ms, p90 ${figure.warmP90} ms`);
      reads.push(figure);
    }
    return { events: AS_OF_EVENTS + 1, logEvents, seedSeconds, firstOfProcess, reads };
  } finally {
    await app.close();
    await app.closeBare();
    await drop();
  }
}

export const asOfMissed = (f: AsOfFigures): string[] =>
  f.reads.filter((r) => r.firstMs >= TARGET_MS).map((r) => `as_of at ${r.name} of a stream of ${f.events} events: first read ${r.firstMs} ms, target < ${TARGET_MS} ms`);

export const asOfRows = (f: AsOfFigures): Row[] => [
  `as_of — GET /users/:id/status?as_of=P, the user's stream of ${f.events} events (the log ${f.logEvents}); first read of P (builds its view), then ${WARM_READS} reads; the process's first as_of read ${f.firstOfProcess.ms} ms`,
  ...f.reads.map((r): Row => [`${r.name} (version ${r.streamVersion})`, '', String(r.warmP50), String(r.warmP90), '', '', `first < ${TARGET_MS} ms`, `first read ${r.firstMs} ms (node cpu ${r.firstNodeCpuMs} ms)`]),
];

export const asOfJson = (f: AsOfFigures) => ({ ...f, seedSeconds: round(f.seedSeconds, 1), targets: { firstReadMs: TARGET_MS } });
