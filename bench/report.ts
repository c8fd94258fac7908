/**
 * The report: the black-box table (each figure beside its target), the in-process explain
 * table, the deep dives run, then one JSON line with every figure (bench/README.md, "The
 * figures"). Returns the number of targets missed (the exit code follows it).
 */
import { availableParallelism } from 'node:os';
import { appendRows, type AppendFigure } from './appends.js';
import { asOfJson, asOfMissed, asOfRows, type AsOfFigures } from './as-of.js';
import type { ExplainFigure } from './blackbox/explain.js';
import type { BlackboxFigures } from './blackbox/measure.js';
import { blackboxReport } from './blackbox/report.js';
import { feedRows, feedsJson, type FeedFigures } from './feeds.js';
import { importJson, importMissed, importRow, type ImportFigures } from './import.js';
import { logTreeJson, logTreeMissed, logTreeRows, type LogTreeFigures } from './log-tree.js';
import { mb, memory } from './harness/meters.js';
import { APPEND_SECONDS, COMMIT_COUNT, BRANCH_COUNT, GROUP_COUNT, MR_COUNT, PROJECT_COUNT, REBUILD_EVENTS, SECONDS, SEED_ORDER, SEED_PARALLEL, USER_COUNT, WORKERS } from './harness/settings.js';
import type { Row } from './harness/table.js';
import { MEMORY_TARGETS, memoryRows, type MemoryFigures } from './memory.js';
import { mergeRequestRows, mergeRequestsJson, type MergeRequestFigures } from './merge-requests.js';
import { rebuildJson, rebuildRows, type RebuildFigures } from './rebuild.js';
import { repositoryJson, repositoryReport, type RepositoryFigures } from './repository.js';
import { verifyJson, verifyMissed, verifyRow, type VerifyFigures } from './verify.js';

export interface Figures {
  feeds?: FeedFigures;
  mergeRequests?: MergeRequestFigures;
  appends?: AppendFigure[];
  rebuild?: RebuildFigures;
  memory?: MemoryFigures;
  logTree?: LogTreeFigures;
  importVerify?: { import: ImportFigures; verify: VerifyFigures };
  repository?: RepositoryFigures;
  asOf?: AsOfFigures;
}

export function report(
  figures: Figures,
  run: { blackbox: BlackboxFigures | undefined; explain: ExplainFigure[] | undefined; serverVersion: string; phases: readonly string[]; totalSeconds: number },
): number {
  const { feeds, appends, rebuild } = figures;
  const out: string[] = ['', `forgelog bench — ${availableParallelism()} cores, node ${process.version}, PostgreSQL ${run.serverVersion}; phases ${run.phases.join(', ')}`];
  const missed: string[] = [];
  if (run.blackbox) {
    const bb = blackboxReport(run.blackbox, run.explain);
    out.push(...bb.lines);
    missed.push(...bb.missed);
  }
  if (figures.repository) {
    const repository = repositoryReport(figures.repository);
    out.push(...repository.lines);
    missed.push(...repository.missed);
  }
  const rows: Row[] = [
    ...(feeds ? feedRows(feeds) : []),
    ...(figures.mergeRequests ? mergeRequestRows(figures.mergeRequests) : []),
    ...(appends ? appendRows(appends) : []),
    ...(rebuild ? rebuildRows(rebuild) : []),
    ...(figures.memory ? memoryRows(figures.memory) : []),
    ...(figures.logTree ? logTreeRows(figures.logTree) : []),
    ...(figures.asOf ? asOfRows(figures.asOf) : []),
    ...(figures.importVerify ? ['Import and verify — a bundle written here, imported into a new database, then verified; every check on', importRow(figures.importVerify.import), verifyRow(figures.importVerify.verify)] : []),
  ];
  if (figures.logTree) missed.push(...logTreeMissed(figures.logTree));
  if (figures.asOf) missed.push(...asOfMissed(figures.asOf));
  if (figures.importVerify) missed.push(...importMissed(figures.importVerify.import), ...verifyMissed(figures.importVerify.verify));
  if (rows.length > 0) {
    // The deep dives' rows: scenario, rate, p50, p90, p99, vs bare, target, notes.
    const header = ['scenario', 'rate', 'p50 ms', 'p90 ms', 'p99 ms', 'vs bare', 'target', 'notes'];
    const cells = rows.filter((r): r is string[] => Array.isArray(r));
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
    const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : i === 7 ? c : c.padStart(widths[i]!))).join('  ').trimEnd();
    out.push('', 'Deep dives and the log tree (in-process; bench/README.md, "Deep dives", "Log tree")', line(header), line(header.map((_, i) => '-'.repeat(widths[i]!))), ...rows.map((r) => (typeof r === 'string' ? r : line(r))));
  }
  out.push('', missed.length === 0 ? 'every target met' : `MISSED ${missed.length} target(s):\n${missed.map((m) => `  - ${m}`).join('\n')}`, `total ${run.totalSeconds} s`);
  process.stdout.write(`${out.join('\n')}\n`);

  const bb = run.blackbox;
  const json = {
    when: new Date().toISOString(),
    machine: { cores: availableParallelism(), node: process.version, postgres: run.serverVersion },
    settings: { phases: run.phases, workers: WORKERS, users: USER_COUNT, groups: GROUP_COUNT, projects: PROJECT_COUNT, mergeRequests: MR_COUNT, commits: COMMIT_COUNT, branches: BRANCH_COUNT, seconds: SECONDS, appendSeconds: APPEND_SECONDS, rebuildEvents: REBUILD_EVENTS, seedOrder: SEED_ORDER, seedParallel: SEED_PARALLEL, ...(bb ? { blackbox: bb.settings } : {}) },
    blackbox: bb && {
      seedSeconds: bb.seedSeconds,
      data: { counts: bb.data.counts, seconds: bb.data.seconds },
      pairs: bb.pairs.map((p) => ({ name: p.endpoint.name, bare: p.endpoint.bare, ratioTarget: p.endpoint.ratioTarget, gpt: p.endpoint.gpt, forgelog: p.forgelog, bareFigure: p.bare, ratio: p.ratio, ratioMin: p.ratioMin, ratioMax: p.ratioMax, ratioByRound: p.ratioByRound })),
      create: bb.create,
      memory: bb.memory,
      idle: bb.idle,
    },
    explain: run.explain,
    feeds: feeds && feedsJson(feeds),
    mergeRequests: figures.mergeRequests && mergeRequestsJson(figures.mergeRequests),
    appends,
    rebuild: rebuild && rebuildJson(rebuild),
    rss: { phasesMb: memory.phases, peakSampledMb: mb(memory.peakSampled) },
    memory: figures.memory && { ...figures.memory, targets: MEMORY_TARGETS },
    logTree: figures.logTree && logTreeJson(figures.logTree),
    import: figures.importVerify && importJson(figures.importVerify.import),
    verify: figures.importVerify && verifyJson(figures.importVerify.verify),
    repository: figures.repository && repositoryJson(figures.repository),
    asOf: figures.asOf && asOfJson(figures.asOf),
    missed,
    totalSeconds: run.totalSeconds,
  };
  process.stdout.write(`${JSON.stringify(json)}\n`);
  return missed.length;
}
