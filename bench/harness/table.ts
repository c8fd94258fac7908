/** The report's table: its rows, and the cells every section writes alike. */
import { round, type CpuSplit } from './meters.js';
import type { HttpFigure } from './scenarios.js';

/** A row of cells, or a string: a section heading or a note spanning the table. */
export type Row = string | string[];

export const ratio = (a: number, b: number) => round((a / b) * 100, 1);
export const perSecond = (events: number, seconds: number) => (seconds > 0 ? round(events / seconds) : 0);
export const cpuNote = (c: CpuSplit) => `cpu node/loadgen/pg/other ${c.server}/${c.loadgen}/${c.postgres}/${c.other}`;

/** An HTTP scenario's row: its rate and latency, its ratio to `vs`, its target and notes. */
export const httpRow = (f: HttpFigure, vs: HttpFigure | undefined, target: string, extra: string[] = []): string[] => [
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
];
