/**
 * 7. Project areas (bench/README.md): the list endpoints of the areas under a project —
 * GET /projects/:id/environments and /deploy_keys — beside a bare route sending the
 * environments' SELECT, then each
 * at a fixed 200 requests/s, where GitLab's own performance tool holds such lists to
 * p90 < 200 ms. Targets: p90 < 200 ms at 200 req/s; the full-stack rate is shown against bare.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Hono } from 'hono';
import sshpk from 'sshpk';
import type pg from 'pg';
import type { BenchApp } from './harness/app.js';
import type { LoadGenerator } from './harness/load-generator.js';
import { log, round } from './harness/meters.js';
import { closeServer, compareScenarios, listenLocal, type HttpFigure, type Scenario } from './harness/scenarios.js';
import { CONNECTIONS, SECONDS } from './harness/settings.js';
import { httpRow, type Row } from './harness/table.js';

/** Per project, what each list holds (one GitLab page). */
const ITEMS = 20;
const FIXED_RATE = 200;
/** The bare route's SELECT: the environments list's page. */
const BARE_SQL = 'select * from environments where project_id = $1 order by id limit 20';
const P90_TARGET_MS = 200;

export interface FixedRateFigure {
  name: string;
  rate: number;
  achieved: number;
  p50: number;
  p90: number;
  p99: number;
  non2xx: number;
}

export interface ProjectAreaFigures {
  bare: HttpFigure;
  lists: HttpFigure[];
  fixed: FixedRateFigure[];
}

interface AreaList {
  /** The path below /api/v4/projects/:id. */
  readonly path: string;
  /** Fills a project's list over HTTP as root. */
  seed(app: BenchApp, projectId: number): Promise<void>;
}

async function post(app: BenchApp, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${app.base}/api/v4${path}`, { method: 'POST', headers: { 'PRIVATE-TOKEN': app.rootToken, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const AREAS: readonly AreaList[] = [
  {
    path: 'environments',
    async seed(app, projectId) {
      for (let i = 0; i < ITEMS; i++) await post(app, `/projects/${projectId}/environments`, { name: `review/app-${i}`, external_url: `https://app-${i}.example.com` });
    },
  },
  {
    path: 'deploy_keys',
    async seed(app, projectId) {
      for (let i = 0; i < ITEMS; i++) await post(app, `/projects/${projectId}/deploy_keys`, { title: `deploy ${i}`, key: ed25519PublicKey(), can_push: i % 2 === 0 });
    },
  },
];

/** A fresh ed25519 public key in OpenSSH's one-line format. */
function ed25519PublicKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  return sshpk.parseKey(publicKey.export({ type: 'spki', format: 'pem' }), 'pem').toString('ssh');
}

export async function measureProjectAreas(gen: LoadGenerator, app: BenchApp): Promise<ProjectAreaFigures> {
  log(`project areas: a project with ${ITEMS} items per list…`);
  const project = await post(app, '/projects', { name: `bench-areas-${Date.now()}` });
  for (const area of AREAS) await area.seed(app, project.id);
  const bareApp = await listenLocal(bareListApp(app.barePool, BARE_SQL).fetch);
  const headers = { 'PRIVATE-TOKEN': app.rootToken };
  const lists: Scenario[] = AREAS.map((area) => ({
    name: `GET /api/v4/projects/:id/${area.path}`,
    job: { url: app.base, requests: [{ method: 'GET', path: `/api/v4/projects/${project.id}/${area.path}`, headers }] },
    traffic: app.traffic,
    pool: app.handle.pool!,
    counter: app.statements,
  }));
  const bareScenario: Scenario = {
    name: 'bare GET /projects/:id/environments (1 SELECT)',
    job: { url: `http://127.0.0.1:${bareApp.port}`, requests: [{ method: 'GET', path: `/projects/${project.id}` }] },
    traffic: bareApp.traffic,
    pool: app.barePool,
  };
  const [bare, ...measured] = await compareScenarios(gen, [bareScenario, ...lists]);
  await closeServer(bareApp.server);

  const fixed: FixedRateFigure[] = [];
  for (const scenario of lists) {
    log(`  ${scenario.name} at ${FIXED_RATE} req/s for ${SECONDS} s…`);
    const r = await gen.run({ ...scenario.job, connections: CONNECTIONS, seconds: SECONDS, overallRate: FIXED_RATE });
    fixed.push({ name: scenario.name, rate: FIXED_RATE, achieved: round(r.rps), p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, non2xx: r.non2xx });
  }
  return { bare: bare!, lists: measured, fixed };
}

/** A bare hono route sending the list's SELECT on its own pool. */
function bareListApp(barePool: pg.Pool, text: string) {
  return new Hono().get('/projects/:id', async (c) => {
    const { rows } = await barePool.query(text, [Number(c.req.param('id'))]);
    return c.json(rows);
  });
}

export function projectAreaRows(f: ProjectAreaFigures): Row[] {
  return [
    '7. Project areas — lists of 20 under one project (req/s at 50 connections; then each at a fixed 200 req/s)',
    httpRow(f.bare, undefined, ''),
    ...f.lists.map((list) => httpRow(list, f.bare, '')),
    ...f.fixed.map((x) => [
      `${x.name} @ ${x.rate}/s`,
      String(x.achieved),
      x.p50.toFixed(1),
      x.p90.toFixed(1),
      x.p99.toFixed(1),
      '',
      `p90 < ${P90_TARGET_MS} ms: ${x.p90 < P90_TARGET_MS && x.achieved >= x.rate * 0.95 ? 'ok' : 'NOT MET'}`,
      x.non2xx ? `NON-2XX ${x.non2xx}` : '',
    ]),
  ];
}

export const projectAreasJson = (f: ProjectAreaFigures) => ({ ...f, targets: { fixedRate: FIXED_RATE, p90Ms: P90_TARGET_MS } });
