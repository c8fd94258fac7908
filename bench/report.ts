/**
 * The report: one table on stdout, every figure beside its target, then one JSON line with
 * every figure (bench/README.md, "The figures").
 */
import { availableParallelism } from 'node:os';
import { appendRows, type AppendFigure } from './appends.js';
import { feedRows, feedsJson, type FeedFigures } from './feeds.js';
import { groupListRows, groupListsJson, type GroupsFigures } from './group-lists.js';
import { mb, memory } from './harness/meters.js';
import type { HttpFigure } from './harness/scenarios.js';
import { APPEND_SECONDS, CONNECTIONS, GROUP_COUNT, GROUP_SLICE_SECONDS, GROUP_USERS, GROUPS_VACUUM, MEMBER_GROUPS, PROJECT_COUNT, REBUILD_EVENTS, SECONDS, SEED_ORDER, SEED_PARALLEL, SEED_WORKERS, SLICE_SECONDS, UNLOADED_SECONDS, USERS, WARMUP_SECONDS, WORKERS } from './harness/settings.js';
import type { Row } from './harness/table.js';
import { MEMORY_TARGETS, memoryRows, type MemoryFigures } from './memory.js';
import { mergeRequestRows, mergeRequestsJson, type MergeRequestFigures } from './merge-requests.js';
import { projectAreaRows, projectAreasJson, type ProjectAreaFigures } from './project-areas.js';
import { readRows, readsJson, type ReadFigures } from './reads.js';
import { rebuildJson, rebuildRows, type RebuildFigures } from './rebuild.js';
import { writeRows, writesJson, type WriteFigures } from './writes.js';

export interface Figures {
  reads?: ReadFigures;
  writes?: WriteFigures;
  areas?: ProjectAreaFigures;
  groups?: GroupsFigures;
  feeds?: FeedFigures;
  mergeRequests?: MergeRequestFigures;
  appends?: AppendFigure[];
  rebuild?: RebuildFigures;
  memory?: MemoryFigures;
}

export function report(figures: Figures, run: { serverVersion: string; poolSize: number; phases: readonly string[]; totalSeconds: number }) {
  const maxRssMb = mb(process.resourceUsage().maxRSS * 1024);
  const { reads, writes, areas, groups, feeds, appends, rebuild } = figures;
  const rows: Row[] = [
    ...(reads ? readRows(reads) : []),
    ...(writes ? writeRows(writes) : []),
    ...(areas ? projectAreaRows(areas) : []),
    ...(groups ? groupListRows(groups) : []),
    ...(feeds ? feedRows(feeds) : []),
    ...(figures.mergeRequests ? mergeRequestRows(figures.mergeRequests) : []),
    ...(appends ? appendRows(appends) : []),
    ...(rebuild ? rebuildRows(rebuild) : []),
    '6. RSS of this process (app + bare servers; the load generator is a separate process)',
    `   ${memory.phases.map((p) => `${p.phase} ${p.rssMb}`).join(' | ')} MB`,
    `   peak ${mb(memory.peakSampled)} MB (sampled every 50 ms); kernel maxRSS ${maxRssMb} MB`,
    ...(figures.memory ? memoryRows(figures.memory) : []),
  ];

  const header = ['scenario', 'rate', 'p50 ms', 'p90 ms', 'p99 ms', 'vs bare', 'target', 'notes'];
  const cells = rows.filter((r): r is string[] => Array.isArray(r));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : i === 7 ? c : c.padStart(widths[i]!))).join('  ').trimEnd();
  const http = [reads?.bare, reads?.usersById, reads?.currentUser, writes?.bare, writes?.userStatus, areas?.bare, ...(areas?.lists ?? []), groups?.bare, ...(groups?.lists ?? []), figures.mergeRequests?.bare, ...(figures.mergeRequests?.lists ?? [])].filter((f): f is HttpFigure => f !== undefined);
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
    settings: { workers: WORKERS, seconds: SECONDS, sliceSeconds: SLICE_SECONDS, warmupSeconds: WARMUP_SECONDS, appendSeconds: APPEND_SECONDS, connections: CONNECTIONS, users: USERS, poolSize: run.poolSize, rebuildEvents: REBUILD_EVENTS, seedOrder: SEED_ORDER, seedParallel: SEED_PARALLEL, groups: GROUP_COUNT, projects: PROJECT_COUNT, groupUsers: GROUP_USERS, memberGroups: MEMBER_GROUPS, unloadedSeconds: UNLOADED_SECONDS, groupSliceSeconds: GROUP_SLICE_SECONDS, groupsVacuum: GROUPS_VACUUM, seedWorkers: SEED_WORKERS, phases: run.phases },
    reads: reads && readsJson(reads),
    writes: writes && writesJson(writes),
    areas: areas && projectAreasJson(areas),
    groups: groups && groupListsJson(groups),
    feeds: feeds && feedsJson(feeds),
    mergeRequests: figures.mergeRequests && mergeRequestsJson(figures.mergeRequests),
    appends,
    rebuild: rebuild && rebuildJson(rebuild),
    rss: { phasesMb: memory.phases, peakSampledMb: mb(memory.peakSampled), maxRssMb },
    memory: figures.memory && { ...figures.memory, targets: MEMORY_TARGETS },
    totalSeconds: run.totalSeconds,
  };
  process.stdout.write(`${JSON.stringify(json)}\n`);
}
