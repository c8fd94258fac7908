/**
 * The in-process phase that explains the black-box figures (bench/README.md, "Explain"): the
 * same endpoints on the same data, served by the app in this process (openRuntime + createApp,
 * as `forgelog serve` runs it) so that its pool's statements and this process's CPU can be
 * counted per request. Not a rate to compare: the load generator shares the machine with it
 * at a few connections.
 */
import type pg from 'pg';
import { startApp } from '../harness/app.js';
import type { LoadGenerator } from '../harness/load-generator.js';
import { log } from '../harness/meters.js';
import { compareScenarios, type HttpFigure, type Scenario } from '../harness/scenarios.js';
import type { Cleanups } from '../harness/setup.js';
import { EXPLAIN, EXPLAIN_CONNECTIONS, EXPLAIN_SECONDS } from '../harness/settings.js';
import { endpoints } from './endpoints.js';
import type { SeededData } from './seed.js';

export interface ExplainFigure {
  name: string;
  statementsPerRequest: number | undefined;
  cpuMicrosPerRequest: number;
  rps: number;
  p50: number;
  non2xx: number;
}

export async function measureExplain(gen: LoadGenerator, url: string, data: SeededData, cleanups: Cleanups): Promise<ExplainFigure[]> {
  log(`explain: the app in this process on the same database, ${EXPLAIN_CONNECTIONS} connections, ${EXPLAIN_SECONDS} s per endpoint…`);
  const app = await startApp(url, cleanups, data.rootToken);
  try {
    const list = endpoints(data);
    if (EXPLAIN) {
      for (const e of list.filter((x) => x.bare === 'page' || x.bare === 'mrPage')) {
        const request = e.requests[0]!;
        app.statements.capture = [];
        const response = await fetch(`${app.base}${request.path}`, { headers: request.headers ?? {} });
        const captured = app.statements.capture;
        app.statements.capture = undefined;
        await response.arrayBuffer();
        log(`  ${e.name} (${response.status}): ${captured.length} statements`);
        await explainStatements(app.barePool, captured);
      }
    }
    const scenarios: Scenario[] = list.map((e) => ({
      name: e.name,
      job: { url: app.base, requests: e.requests, ...(e.idReplacement ? { idReplacement: true } : {}) },
      traffic: app.traffic,
      pool: app.handle.pool!,
      counter: app.statements,
    }));
    const figures: HttpFigure[] = await compareScenarios(gen, scenarios, { seconds: EXPLAIN_SECONDS, sliceSeconds: EXPLAIN_SECONDS, connections: EXPLAIN_CONNECTIONS, warmupSeconds: Math.min(1, EXPLAIN_SECONDS) });
    return figures.map((f) => ({ name: f.name, statementsPerRequest: f.statementsPerRequest, cpuMicrosPerRequest: f.serverCpuUsPerRequest, rps: f.rps, p50: f.p50, non2xx: f.non2xx }));
  } finally {
    await app.close();
    await app.closeBare();
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
