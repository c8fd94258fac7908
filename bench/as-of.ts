/**
 * `as_of` on one resource (issue 25; bench/README.md, "As of", docs/log-evidence.md): two users
 * whose streams hold BENCH_AS_OF_EVENTS (10,000) events each, written through the users
 * aggregate one event a command (as `PUT /user/status` and `PUT /users/:id` write them): one
 * user's statuses, then the other's profile edits (its bio). Then, over HTTP as root,
 * `GET /users/:id/status?as_of=<position>` and `GET /users/:id?as_of=<position>` at a few
 * positions of each stream: the first read of a position (which builds its view,
 * src/projections/as-of.ts) and the reads after it. Every answer is checked against what the
 * stream held there. Target: the first read under 50 ms. The two streams differ in what a
 * view replays: of the statuses only the last before the position (Projector.lastWins), of
 * the edits one, their changes merged (Projector.mergeRuns: none of them renames).
 */
import { sql } from 'kysely';
import type { UserCommand } from '../src/domain/users/decider.js';
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
  /** Events in each user's stream; the log holds `logEvents` in all. */
  events: number;
  logEvents: number;
  seedSeconds: number;
  /** The process's first as_of read (at the stream's first status): it makes its view's tables itself. */
  firstOfProcess: { ms: number; nodeCpuMs: number };
  reads: { name: string; path: string; position: string; streamVersion: number; firstMs: number; firstNodeCpuMs: number; warmP50: number; warmP90: number }[];
}

/** A stream the phase writes and reads back: its commands, and the resource that shows them. */
interface Stream {
  /** How the report names it. */
  readonly label: string;
  readonly command: (n: number) => UserCommand;
  readonly path: (id: number) => string;
  /** Whether an answer shows the n-th event's change. */
  readonly shows: (body: Record<string, unknown>, n: number) => boolean;
  /** The reads after the process's first: [name, n] (1-based: the n-th command's event). */
  readonly points: readonly (readonly [string, number])[];
}

const STREAMS: readonly Stream[] = [
  {
    // A status set or cleared undoes the earlier ones (Projector.lastWins): a view replays only the last before P.
    label: 'statuses',
    command: (n) => ({ type: 'SetUserStatus', emoji: 'coffee', message: `status ${n}`, messageHtml: `status ${n}` }),
    path: (id) => `/users/${id}/status`,
    shows: (body, n) => body.message === `status ${n}`,
    points: [
      ['the stream’s last event', AS_OF_EVENTS],
      ['its middle', Math.ceil(AS_OF_EVENTS / 2)],
      ['its second status', 2],
      ['the last but one', AS_OF_EVENTS - 1],
    ],
  },
  {
    // A profile update sets only the fields it changes: a view replays the run of them as one, their changes merged (Projector.mergeRuns).
    label: 'profile edits',
    command: (n) => ({ type: 'UpdateUser', changes: { bio: `bio ${n}` }, passwordHash: null }),
    path: (id) => `/users/${id}`,
    shows: (body, n) => body.bio === `bio ${n}`,
    points: [
      ['the stream’s last event', AS_OF_EVENTS],
      ['its middle', Math.ceil(AS_OF_EVENTS / 2)],
    ],
  },
];

export async function measureAsOf(database: string, cleanups: Cleanups): Promise<AsOfFigures> {
  const { url, drop } = await createDatabase(database, cleanups);
  const app = await startApp(url, cleanups);
  try {
    const ctx = app.runtime.app.commands;
    const ids = await createUsersDirect(ctx, STREAMS.length, await hashPassword('benchmark-password'), 'asof');
    const started = performance.now();
    // The position of each stream's n-th command's event (1-based).
    const positions: string[][] = [];
    for (const [i, stream] of STREAMS.entries()) {
      log(`as_of: ${AS_OF_EVENTS} commands (${stream.label}) on user ${ids[i]}'s stream…`);
      const written: string[] = [];
      for (let n = 1; n <= AS_OF_EVENTS; n++) {
        const result = await userCommand(ctx, ids[i]!, stream.command(n));
        if (result.events.length !== 1) throw new Error(`as_of bench: ${stream.label} ${n} appended ${result.events.length} events`);
        written.push(result.events[0]!.globalPosition);
      }
      positions.push(written);
    }
    const seedSeconds = (performance.now() - started) / 1000;
    await app.runtime.worker?.waitUntilCaughtUp({ timeoutMs: 120_000 });
    await sql`analyze`.execute(app.handle.db);
    const logEvents = Number((await sql<{ n: string }>`select count(*) as n from events`.execute(app.handle.db)).rows[0]!.n);
    log(`as_of: seeded in ${round(seedSeconds, 1)} s (the log holds ${logEvents} events)`);

    const get = async (stream: Stream, id: number, position: string, n: number) => {
      const t0 = performance.now();
      const response = await fetch(`${app.base}/api/v4${stream.path(id)}?as_of=${position}`, { headers: { 'PRIVATE-TOKEN': app.rootToken } });
      const body = (await response.json()) as Record<string, unknown>;
      const ms = performance.now() - t0;
      if (response.status !== 200 || !stream.shows(body, n)) throw new Error(`as_of bench: ${stream.label} at ${position} (event ${n}) answered ${response.status} ${JSON.stringify(body)}`);
      return ms;
    };
    const asOf = app.runtime.app.asOf;
    // The process's first as_of read makes its view's tables itself (seconds of DDL); each build
    // then makes the next one's in the background, awaited here between the reads as an
    // auditor's pauses would.
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await get(STREAMS[0]!, ids[0]!, positions[0]![0]!, 1);
    const used0 = process.cpuUsage(cpu0);
    const firstOfProcess = { ms: round(performance.now() - t0, 1), nodeCpuMs: round((used0.user + used0.system) / 1000, 1) };
    log(`as_of: the process's first as_of read (its tables made by the build): ${firstOfProcess.ms} ms (node cpu ${firstOfProcess.nodeCpuMs} ms)`);
    const reads: AsOfFigures['reads'] = [];
    for (const [i, stream] of STREAMS.entries()) {
      for (const [point, n] of stream.points) {
        const position = positions[i]![n - 1]!;
        await asOf.spareMade();
        const cpu = process.cpuUsage();
        const firstMs = await get(stream, ids[i]!, position, n);
        const used = process.cpuUsage(cpu);
        const firstNodeCpuMs = round((used.user + used.system) / 1000, 1);
        const warm: number[] = [];
        for (let k = 0; k < WARM_READS; k++) warm.push(await get(stream, ids[i]!, position, n));
        warm.sort((a, b) => a - b);
        const name = `${stream.label}: ${point}`;
        const figure = { name, path: stream.path(ids[i]!), position, streamVersion: n + 1, firstMs: round(firstMs, 1), firstNodeCpuMs, warmP50: round(percentile(warm, 50), 2), warmP90: round(percentile(warm, 90), 2) };
        log(`as_of ${name} (position ${position}): first read ${figure.firstMs} ms (node cpu ${firstNodeCpuMs} ms), then p50 ${figure.warmP50} ms, p90 ${figure.warmP90} ms`);
        reads.push(figure);
      }
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
  `as_of — GET /users/:id/status and /users/:id ?as_of=P, two users' streams of ${f.events} events each (the log ${f.logEvents}); first read of P (builds its view), then ${WARM_READS} reads; the process's first as_of read ${f.firstOfProcess.ms} ms`,
  ...f.reads.map((r): Row => [`${r.name} (version ${r.streamVersion}, ${r.path.replace(/\/\d+/, '/:id')})`, '', String(r.warmP50), String(r.warmP90), '', '', `first < ${TARGET_MS} ms`, `first read ${r.firstMs} ms (node cpu ${r.firstNodeCpuMs} ms)`]),
];

export const asOfJson = (f: AsOfFigures) => ({ ...f, seedSeconds: round(f.seedSeconds, 1), targets: { firstReadMs: TARGET_MS } });
