/**
 * 4. Appends (bench/README.md): SetUserStatus commands through handleCommand, without HTTP,
 * at each BENCH_WRITERS level of concurrency: events/s and latency per command.
 */
import { hashPassword } from '../src/security/secrets.js';
import type { BenchApp } from './harness/app.js';
import { cpuMeter, log, percentile, round, snapshotCounter, traceStatements, type CpuSplit, type StatementCounter } from './harness/meters.js';
import { APPEND_SECONDS, APPEND_STREAMS, WRITER_LEVELS } from './harness/settings.js';
import { cpuNote, type Row } from './harness/table.js';
import { createUsersDirect, userCommand } from './harness/users.js';
import type { CommandContext } from '../src/commands/kernel/context.js';

export async function measureAppends(app: BenchApp): Promise<AppendFigure[]> {
  log(`appends through handleCommand (${APPEND_SECONDS} s per level)…`);
  const passwordHash = await hashPassword('benchmark-password');
  const figures: AppendFigure[] = [];
  for (const writers of WRITER_LEVELS) figures.push(await appendLevel(app.runtime.app.commands, app.statements, writers, passwordHash));
  return figures;
}

export interface AppendFigure {
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

export function appendRows(appends: readonly AppendFigure[]): Row[] {
  const rows: Row[] = [];
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
  return rows;
}
