/**
 * Memory of real `forgelog serve` processes (issue 8, item 12): child processes, measured
 * from /proc/<pid>/status — VmHWM (the kernel's peak RSS) and VmRSS (now).
 *
 * - embedded: the first start on a new data directory (from the install-time template,
 *   src/database/embedded-template.ts), peak and idle; then a restart on the same directory, idle.
 * - PostgreSQL: a server on a fresh database, idle; then BENCH_MEMORY_STREAMS groups created
 *   through the API (each a new stream the command path folds and caches), then ten times as
 *   many: the peak under that load, and the idle RSS after each round. The per-process caches
 *   are bounded (README: Memory), so the second, ten times larger round must not grow it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureTemplate } from '../src/database/embedded-template.js';
import { startScriptEnv } from './blackbox/processes.js';
import { log } from './harness/meters.js';
import { databaseUrl, inParallel, withAdmin } from './harness/setup.js';
import { SERVER_URL } from './harness/settings.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forgelog.js');
const env = process.env;
const STREAMS = Number(env.BENCH_MEMORY_STREAMS ?? 300);
const IDLE_SECONDS = Number(env.BENCH_MEMORY_IDLE_SECONDS ?? 3);
const CONCURRENCY = 16;

export const MEMORY_TARGETS = { embeddedIdleMb: 400, embeddedFirstStartPeakMb: 500, postgresLoadMb: 250, growthPercent: 10 } as const;

export interface MemoryFigures {
  embedded: { firstStartPeakMb: number; firstStartIdleMb: number; restartPeakMb: number; restartIdleMb: number };
  postgres?: { idleMb: number; streams: number; afterMb: number; streams10x: number; after10xMb: number; peakMb: number; growthMb: number; growthPercent: number; seconds: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function status(pid: number): { peakMb: number; rssMb: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { peakMb: Math.round(kb('VmHWM') / 1024), rssMb: Math.round(kb('VmRSS') / 1024) };
}

interface Child {
  child: ChildProcess;
  port: number;
}

/** `forgelog serve` as a child, in the environment `npm start` gives it; resolves when it logs that it listens. */
function serve(childEnv: NodeJS.ProcessEnv): Promise<Child> {
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...env, ...startScriptEnv(), PORT: '0', LOG_LEVEL: 'info', ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const line = output.split('\n').find((l) => l.includes('"forgelog listening"'));
      if (line) resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`forgelog serve exited with ${code}: ${output.slice(-2000)}`)));
  });
}

function stop({ child }: Child): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function embedded(): Promise<MemoryFigures['embedded']> {
  const template = await ensureTemplate();
  log(`memory: embedded, new data directory from ${template ? 'the template' : 'initdb (no template could be written)'}`);
  const dir = mkdtempSync(join(tmpdir(), 'forgelog-bench-memory-'));
  const childEnv = { FORGELOG_DATA_DIR: dir, FORGELOG_ROOT_TOKEN: 'bench-memory-root', DATABASE_URL: '' };
  try {
    const first = await serve(childEnv);
    await sleep(IDLE_SECONDS * 1000);
    const firstStart = status(first.child.pid!);
    await stop(first);
    log(`  first start: peak ${firstStart.peakMb} MB, idle ${firstStart.rssMb} MB`);
    const again = await serve(childEnv);
    await sleep(IDLE_SECONDS * 1000);
    const restart = status(again.child.pid!);
    await stop(again);
    log(`  restart: peak ${restart.peakMb} MB, idle ${restart.rssMb} MB`);
    return { firstStartPeakMb: firstStart.peakMb, firstStartIdleMb: firstStart.rssMb, restartPeakMb: restart.peakMb, restartIdleMb: restart.rssMb };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates `count` groups through the API, CONCURRENCY at a time. */
async function createGroups(base: string, token: string, from: number, count: number): Promise<void> {
  await inParallel(
    Array.from({ length: count }, (_, i) => from + i),
    CONCURRENCY,
    async (n) => {
      const response = await fetch(`${base}/api/v4/groups`, {
        method: 'POST',
        headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `memory ${n}`, path: `memory-${n}` }),
      });
      if (response.status !== 201) throw new Error(`POST /groups answered ${response.status}: ${await response.text()}`);
    },
  );
}

async function postgres(database: string): Promise<MemoryFigures['postgres']> {
  await withAdmin((admin) => admin.query(`create database ${database}`));
  const url = databaseUrl(SERVER_URL, database);
  const token = 'bench-memory-root-token';
  let server: Child | undefined;
  try {
    log(`memory: PostgreSQL, ${STREAMS} then ${STREAMS * 10} new streams (groups through the API)`);
    server = await serve({ DATABASE_URL: url, FORGELOG_ROOT_TOKEN: token });
    const pid = server.child.pid!;
    const base = `http://127.0.0.1:${server.port}`;
    await sleep(IDLE_SECONDS * 1000);
    const idle = status(pid);
    const started = performance.now();
    await createGroups(base, token, 0, STREAMS);
    await sleep(IDLE_SECONDS * 1000);
    const after = status(pid);
    log(`  idle ${idle.rssMb} MB; after ${STREAMS} streams ${after.rssMb} MB (peak ${after.peakMb} MB)`);
    await createGroups(base, token, STREAMS, STREAMS * 10);
    await sleep(IDLE_SECONDS * 1000);
    const after10x = status(pid);
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    log(`  after ${STREAMS * 10} more ${after10x.rssMb} MB (peak ${after10x.peakMb} MB), ${seconds} s`);
    const growthMb = after10x.rssMb - after.rssMb;
    return {
      idleMb: idle.rssMb,
      streams: STREAMS,
      afterMb: after.rssMb,
      streams10x: STREAMS * 10,
      after10xMb: after10x.rssMb,
      peakMb: after10x.peakMb,
      growthMb,
      growthPercent: Math.round((growthMb / after.rssMb) * 1000) / 10,
      seconds,
    };
  } finally {
    if (server) await stop(server);
    await withAdmin((admin) => admin.query(`drop database if exists ${database} with (force)`));
  }
}

/** Both measurements; PostgreSQL (on the bench's server) only when a database name is given. */
export async function measureMemory(database?: string): Promise<MemoryFigures> {
  const figures: MemoryFigures = { embedded: await embedded() };
  if (database) {
    const result = await postgres(database);
    if (result) figures.postgres = result;
  }
  return figures;
}

const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');

/** The report's section: each figure beside its target. */
export function memoryRows(figures: MemoryFigures): string[] {
  const t = MEMORY_TARGETS;
  const e = figures.embedded;
  const rows = [
    '7. Memory of `forgelog serve` child processes (RSS from /proc; peak = VmHWM)',
    `   embedded first start (new data dir, template): peak ${e.firstStartPeakMb} MB (target <= ${t.embeddedFirstStartPeakMb}: ${verdict(e.firstStartPeakMb <= t.embeddedFirstStartPeakMb)}), idle ${e.firstStartIdleMb} MB`,
    `   embedded restart: idle ${e.restartIdleMb} MB (target <= ${t.embeddedIdleMb}: ${verdict(e.restartIdleMb <= t.embeddedIdleMb && e.firstStartIdleMb <= t.embeddedIdleMb)}; first start idle ${e.firstStartIdleMb} MB), peak ${e.restartPeakMb} MB`,
  ];
  const p = figures.postgres;
  if (p) {
    rows.push(
      `   PostgreSQL: idle ${p.idleMb} MB; after ${p.streams} new streams ${p.afterMb} MB; after ${p.streams10x} more ${p.after10xMb} MB; peak under the load ${p.peakMb} MB (target <= ${t.postgresLoadMb}: ${verdict(p.peakMb <= t.postgresLoadMb)})`,
      `   PostgreSQL growth with 10x the streams: ${p.growthMb >= 0 ? '+' : ''}${p.growthMb} MB (${p.growthPercent}%; target <= ${t.growthPercent}%: ${verdict(p.growthPercent <= t.growthPercent)}), ${p.seconds} s of group creation`,
    );
  }
  return rows;
}

// Run on its own: node --import tsx bench/memory.ts (PostgreSQL part with BENCH_DATABASE_URL or the default server).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const figures = await measureMemory(`forgelog_bench_memory_${process.pid}`);
  process.stdout.write(`${memoryRows(figures).join('\n')}\n${JSON.stringify({ memory: figures, targets: MEMORY_TARGETS })}\n`);
}
