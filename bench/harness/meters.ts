/**
 * What the bench measures besides rates: statements the app's pool sends, CPU by owner
 * (from /proc), and this process's RSS; plus the log and rounding every figure goes through.
 */
import { readFileSync, readdirSync } from 'node:fs';
import type pg from 'pg';
import { TRACE } from './settings.js';

export const log = (line: string) => process.stderr.write(`${line}\n`);
export const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

// ───────────────────────────── Statements ─────────────────────────────

/** Counts the statements the app's pool sends (round trips) and its rollbacks (= conflict retries). */
export interface StatementCounter {
  statements: number;
  rollbacks: number;
  /** Statement count by its first words (BENCH_TRACE=1 prints them per request). */
  byText: Map<string, number>;
  /** When set, every statement (text and parameters) is recorded here (BENCH_EXPLAIN). */
  capture?: { text: string; values: unknown[] }[] | undefined;
}
export function countStatements(pool: pg.Pool): StatementCounter {
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
export const snapshotCounter = (c: StatementCounter) => ({ statements: c.statements, rollbacks: c.rollbacks, byText: new Map(c.byText) });
export function traceStatements(label: string, before: ReturnType<typeof snapshotCounter>, after: StatementCounter, per: number) {
  if (!TRACE || per <= 0) return;
  log(`    statements per ${label}:`);
  const rows = [...after.byText].map(([text, n]) => [text, (n - (before.byText.get(text) ?? 0)) / per] as const).filter(([, n]) => n > 0.005);
  for (const [text, n] of rows.sort((a, b) => b[1] - a[1])) log(`      ${n.toFixed(2).padStart(6)}  ${text}`);
}

// ───────────────────────────── CPU ─────────────────────────────

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
export interface CpuSplit {
  server: number;
  loadgen: number;
  postgres: number;
  other: number;
}
/** CPU ticks by owner over some seconds; sums of several windows stay meaningful. */
export interface CpuTicks {
  self: number;
  gen: number;
  postgres: number;
  other: number;
  seconds: number;
}
export const NO_TICKS: CpuTicks = { self: 0, gen: 0, postgres: 0, other: 0, seconds: 0 };
export const addTicks = (a: CpuTicks, b: CpuTicks): CpuTicks => ({
  self: a.self + b.self,
  gen: a.gen + b.gen,
  postgres: a.postgres + b.postgres,
  other: a.other + b.other,
  seconds: a.seconds + b.seconds,
});
export function toCores(t: CpuTicks): CpuSplit {
  const cores = (ticks: number) => (t.seconds > 0 ? Math.round((ticks / CLOCK_TICKS / t.seconds) * 100) / 100 : 0);
  return { server: cores(t.self), loadgen: cores(t.gen), postgres: cores(t.postgres), other: cores(t.other) };
}
export function cpuTicks(loadgenPid: number | undefined) {
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
export const cpuMeter = (loadgenPid: number | undefined) => {
  const stop = cpuTicks(loadgenPid);
  return () => toCores(stop());
};

/**
 * CPU of named processes (by pid), of PostgreSQL's processes and of everything else, in
 * cores, over the window from this call to the returned function's.
 */
export function processCpu(pids: Record<string, number | undefined>) {
  const snapshot = () => {
    const named = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? (statTicks(String(pid))?.ticks ?? 0) : 0]));
    return { named, ...cpuSnapshot(undefined) };
  };
  const start = snapshot();
  return (): Record<string, number> & { seconds: number } => {
    const end = snapshot();
    const seconds = (end.at - start.at) / 1000;
    const cores = (ticks: number) => (seconds > 0 ? ticks / CLOCK_TICKS / seconds : 0);
    const out: Record<string, number> = {};
    let namedTicks = 0;
    for (const name of Object.keys(pids)) {
      const ticks = end.named[name]! - start.named[name]!;
      namedTicks += ticks;
      out[name] = cores(ticks);
    }
    let postgres = 0;
    for (const [pid, ticks] of end.postgres) postgres += ticks - (start.postgres.get(pid) ?? 0);
    out.postgres = cores(postgres);
    out.other = cores(Math.max(0, end.busy - start.busy - namedTicks - postgres));
    return { ...out, seconds };
  };
}

// ───────────────────────────── RSS ─────────────────────────────

/** RSS after each phase, and the peak (sampled every 50 ms once sampleRss runs, plus the kernel's maxRSS). */
export const memory = {
  peakSampled: 0,
  phases: [] as { phase: string; rssMb: number; heapUsedMb: number }[],
};
export const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
export function sampleRss() {
  const sampler = setInterval(() => {
    memory.peakSampled = Math.max(memory.peakSampled, process.memoryUsage.rss());
  }, 50);
  sampler.unref();
}
export function rssAfter(phase: string) {
  const usage = process.memoryUsage();
  memory.peakSampled = Math.max(memory.peakSampled, usage.rss);
  memory.phases.push({ phase, rssMb: mb(usage.rss), heapUsedMb: mb(usage.heapUsed) });
  log(`  rss after ${phase}: ${mb(usage.rss)} MB`);
}
