/**
 * 9. Merge request lists (bench/README.md): BENCH_MR_COUNT (100,000) merge requests in
 * BENCH_MR_PROJECTS (1,000) projects of one group — the projects, their `bug` and `feature`
 * labels and the measured user's memberships made over HTTP; the merge requests seeded
 * through their aggregate's append path (the decider's OpenMergeRequest, then Close or Merge
 * for some, appendToStream and the inline projectors, many streams per transaction: NOT
 * through HTTP, and never into read tables), then
 *   GET /projects/:id/merge_requests?state=opened&labels=bug and GET /merge_requests?scope=all
 * as a non-admin user (a reporter of half the private projects), beside a bare route sending
 * the project list's page SELECT. Target: p90 < 20 ms.
 */
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type pg from 'pg';
import { sql } from 'kysely';
import { runInlineProjections } from '../src/commands/kernel/append-steps.js';
import type { Db } from '../src/database/database.js';
import { mergeRequestClaims, mergeRequestDecider, type MergeRequestCommand } from '../src/domain/merge-requests/decider.js';
import { mergeRequestEventIndex, mergeRequestStreamId, type MergeRequestEvent } from '../src/domain/merge-requests/events.js';
import { GENESIS_HASH, appendToStream } from '../src/eventstore/store.js';
import type { EventMetadata } from '../src/eventstore/types.js';
import { inlineProjectors } from '../src/projections/registry.js';
import { startApp, type BenchApp } from './harness/app.js';
import type { LoadGenerator } from './harness/load-generator.js';
import { log, round } from './harness/meters.js';
import { closeServer, compareScenarios, listenLocal, type HttpFigure, type Scenario } from './harness/scenarios.js';
import { createDatabase, inParallel, reserveIds, type Cleanups } from './harness/setup.js';
import { SECONDS } from './harness/settings.js';
import { httpRow, type Row } from './harness/table.js';

const num = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number(v));
export const MR_COUNT = num(process.env.BENCH_MR_COUNT, 100_000);
export const MR_PROJECTS = num(process.env.BENCH_MR_PROJECTS, 1_000);
/** Merge requests per transaction, and transactions at once. */
const BATCH = 1_000;
const PARALLEL = 4;
const P90_TARGET_MS = 20;
/** The bare route's SELECT: the project list's page (state and one label), without the label lookup by title or the count. */
const BARE_SQL = `select * from merge_requests where project_id = $1 and state = 'opened' and label_ids && $2::integer[] order by created_at desc, id desc limit 20`;

export interface MergeRequestFigures {
  seed: { mergeRequests: number; projects: number; seconds: number; setupSeconds: number };
  bare: HttpFigure;
  lists: (HttpFigure & { total: string })[];
  /** Each list alone at 1 connection: the latency the target is about. */
  latency: { name: string; total: string; rps: number; p50: number; p90: number; p99: number; non2xx: number }[];
}

async function call(app: BenchApp, method: string, path: string, body?: unknown, token = app.rootToken): Promise<any> {
  const res = await fetch(`${app.base}/api/v4${path}`, {
    method,
    headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const sha = (n: number, salt: string) => `${salt}${n.toString(16)}`.padStart(40, '0').slice(-40);

interface SeedProject {
  readonly id: number;
  readonly labels: { readonly bug: number; readonly feature: number };
}

/** One project's merge requests: 60 % open, 25 % closed, 15 % merged; bug on 30 %, feature on 20 %; a few by the measured user. */
function commandsFor(p: SeedProject, index: number, iid: number, versionId: number, users: { root: number; bench: number }): MergeRequestCommand[] {
  const labelIds = [...(index % 10 < 3 ? [p.labels.bug] : []), ...(index % 5 === 1 ? [p.labels.feature] : [])];
  const open: MergeRequestCommand = {
    type: 'OpenMergeRequest',
    projectId: p.id,
    sourceProjectId: p.id,
    iid,
    authorId: index % 50 === 0 ? users.bench : users.root,
    title: `${index % 7 === 0 ? 'WIP: ' : ''}Change ${iid} of project ${p.id}`,
    sourceBranch: `feature-${iid}`,
    targetBranch: 'master',
    fields: { description: `Merge request ${iid}: bench data`, labelIds, assigneeIds: index % 3 === 0 ? [users.bench] : [] },
    branches: { sourceExists: true, targetExists: true, openDuplicateIid: null },
    version: { version_id: versionId, head_commit_sha: sha(versionId, 'a'), base_commit_sha: sha(p.id, 'b'), start_commit_sha: sha(p.id, 'b'), commit_shas: [sha(versionId, 'a')], files_count: 1 },
  };
  const state = index % 20;
  if (state < 12) return [open];
  if (state < 17) return [open, { type: 'UpdateMergeRequest', fields: {}, stateEvent: 'close', byId: users.root }];
  return [open, { type: 'MergeMergeRequest', byId: users.root, merge: { mergeCommitSha: sha(versionId, 'c'), squashCommitSha: null } }];
}

/**
 * Seeds the merge requests through their aggregate: each a new stream whose commands the
 * decider decides, appended with appendToStream (hash chain, index columns, claims) and
 * projected by the inline projectors, as handleCommand does — BATCH streams per transaction.
 */
async function seedMergeRequests(db: Db, projects: readonly SeedProject[], perProject: number, users: { root: number; bench: number }, metadata: EventMetadata) {
  const total = projects.length * perProject;
  const firstId = await reserveIds(db, 'merge_requests_id_seq', total);
  const firstVersion = await reserveIds(db, 'merge_request_versions_id_seq', total);
  const projectors = inlineProjectors();
  const jobs = Array.from({ length: Math.ceil(total / BATCH) }, (_, i) => i);
  const start = Date.now() - total * 60_000;
  await inParallel(jobs, PARALLEL, async (job) => {
    await db.transaction().execute(async (trx) => {
      const claims: { kind: string; key: string; stream_id: string }[] = [];
      for (let n = job * BATCH; n < Math.min(total, (job + 1) * BATCH); n++) {
        const project = projects[Math.floor(n / perProject)]!;
        const index = n % perProject;
        const id = firstId + n;
        const streamId = mergeRequestStreamId(id);
        let state = mergeRequestDecider.initialState(id);
        const events: MergeRequestEvent[] = [];
        for (const command of commandsFor(project, index, index + 1, firstVersion + n, users)) {
          for (const event of mergeRequestDecider.decide(command, state)) {
            for (const claim of mergeRequestClaims(event).acquire) claims.push({ kind: claim.kind, key: claim.key, stream_id: streamId });
            state = mergeRequestDecider.evolve(state, event);
            events.push(event);
          }
        }
        const stored = await appendToStream(trx, {
          streamId,
          expectedVersion: 0,
          headHash: GENESIS_HASH,
          events: events.map((event) => ({ type: event.type, data: event.data, index: mergeRequestEventIndex(event) })),
          metadata,
          // Spread over time: the projects' lists interleave, a minute apart.
          occurredAt: new Date(start + (index * projects.length + Math.floor(n / perProject)) * 60_000),
        });
        await runInlineProjections(trx, projectors, stored);
      }
      for (let i = 0; i < claims.length; i += 5000) await trx.insertInto('claims').values(claims.slice(i, i + 5000)).execute();
    });
  });
  // Autovacuum's steady state: statistics, and a visibility map for index-only scans.
  await sql`vacuum analyze merge_requests`.execute(db);
  return total;
}

export async function measureMergeRequestLists(gen: LoadGenerator, database: string, cleanups: Cleanups): Promise<MergeRequestFigures> {
  const name = `${database}_mrs`;
  const perProject = Math.max(1, Math.round(MR_COUNT / MR_PROJECTS));
  log(`merge request lists: ${perProject * MR_PROJECTS} merge requests in ${MR_PROJECTS} projects in database ${name}…`);
  const { url } = await createDatabase(name, cleanups);
  const app = await startApp(url, cleanups);
  const setupStarted = performance.now();
  const suffix = Date.now().toString(36);
  const group = await call(app, 'POST', '/groups', { name: `bench-mrs-${suffix}`, path: `bench-mrs-${suffix}`, visibility: 'public' });
  const bench = await call(app, 'POST', '/users', { username: `mrbench_${suffix}`, email: `mrbench_${suffix}@example.com`, name: 'MR bench', password: 'benchmark-password', skip_confirmation: true });
  const token = (await call(app, 'POST', `/users/${bench.id}/personal_access_tokens`, { name: 'bench', scopes: ['api'] })).token as string;
  const root = (await call(app, 'GET', '/user')).id as number;
  log(`  ${MR_PROJECTS} projects (one in five private; the user a reporter of every other private one) and their labels over HTTP…`);
  // One at a time: projects created at once in one group contend for its lock (409 after the retries).
  const made: { id: number; visibility: string }[] = [];
  for (let i = 0; i < MR_PROJECTS; i++) {
    const visibility = i % 5 === 4 ? 'private' : 'public';
    made.push({ id: (await call(app, 'POST', '/projects', { name: `mr-${i}`, path: `mr-${i}`, namespace_id: group.id, visibility })).id, visibility });
  }
  const projects: SeedProject[] = new Array(MR_PROJECTS);
  await inParallel(made, 8, async (project, i) => {
    const bug = (await call(app, 'POST', `/projects/${project.id}/labels`, { name: 'bug', color: '#d9534f' })).id;
    const feature = (await call(app, 'POST', `/projects/${project.id}/labels`, { name: 'feature', color: '#5cb85c' })).id;
    if (project.visibility === 'private' && i % 10 === 4) await call(app, 'POST', `/projects/${project.id}/members`, { user_id: bench.id, access_level: 20 });
    projects[i] = { id: project.id, labels: { bug, feature } };
  });
  const setupSeconds = (performance.now() - setupStarted) / 1000;
  log(`  made in ${round(setupSeconds, 1)} s; seeding the merge requests through the aggregate's append path (not HTTP), ${BATCH} per transaction, ${PARALLEL} at once…`);
  const metadata: EventMetadata = { actor_id: root, actor_username: 'root', sudo_from_id: null, impersonation: false, token_id: null, ip: '127.0.0.1', request_id: randomUUID() };
  const seedStarted = performance.now();
  const seeded = await seedMergeRequests(app.handle.db, projects, perProject, { root, bench: bench.id }, metadata);
  const seconds = (performance.now() - seedStarted) / 1000;
  log(`  seeded ${seeded} merge requests in ${round(seconds, 1)} s (${round(seeded / seconds)} /s)`);

  const project = projects[0]!;
  const headers = { 'PRIVATE-TOKEN': token };
  const paths = [`/api/v4/projects/${project.id}/merge_requests?state=opened&labels=bug`, '/api/v4/merge_requests?scope=all'];
  const totals: string[] = [];
  for (const path of paths) {
    const probe = await fetch(`${app.base}${path}`, { headers });
    if (probe.status !== 200) throw new Error(`GET ${path}: ${probe.status} ${await probe.text()}`);
    const body = (await probe.json()) as unknown[];
    totals.push(probe.headers.get('x-total') ?? '> 10,000');
    log(`  GET ${path}: ${body.length} on the page, X-Total ${totals.at(-1)}`);
  }
  const bareApp = await listenLocal(bareListApp(app.barePool).fetch);
  const lists: Scenario[] = paths.map((path) => ({
    name: `GET ${path.replace(String(project.id), ':id')}`,
    job: { url: app.base, requests: [{ method: 'GET', path, headers }] },
    traffic: app.traffic,
    pool: app.handle.pool!,
    counter: app.statements,
  }));
  const bareScenario: Scenario = {
    name: 'bare GET /projects/:id/merge_requests (1 SELECT)',
    job: { url: `http://127.0.0.1:${bareApp.port}`, requests: [{ method: 'GET', path: `/projects/${project.id}/${project.labels.bug}` }] },
    traffic: bareApp.traffic,
    pool: app.barePool,
  };
  const [bare, ...measured] = await compareScenarios(gen, [bareScenario, ...lists]);
  await closeServer(bareApp.server);
  const latency: MergeRequestFigures['latency'] = [];
  for (const [i, scenario] of lists.entries()) {
    log(`  ${scenario.name} at 1 connection for ${SECONDS} s…`);
    const r = await gen.run({ ...scenario.job, connections: 1, seconds: SECONDS });
    latency.push({ name: scenario.name, total: totals[i]!, rps: round(r.rps), p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, non2xx: r.non2xx });
  }
  await app.close();
  return { seed: { mergeRequests: seeded, projects: MR_PROJECTS, seconds, setupSeconds }, bare: bare!, lists: measured.map((m, i) => ({ ...m, total: totals[i]! })), latency };
}

/** A bare hono route sending the project list's page SELECT on its own pool. */
function bareListApp(barePool: pg.Pool) {
  return new Hono().get('/projects/:id/:label', async (c) => {
    const { rows } = await barePool.query(BARE_SQL, [Number(c.req.param('id')), [Number(c.req.param('label'))]]);
    return c.json(rows);
  });
}

export function mergeRequestRows(f: MergeRequestFigures): Row[] {
  const target = (p90: number) => `p90 < ${P90_TARGET_MS} ms: ${p90 < P90_TARGET_MS ? 'ok' : 'NOT MET'}`;
  return [
    `9. Merge request lists — ${f.seed.mergeRequests} merge requests in ${f.seed.projects} projects (seeded through the aggregate's append path in ${round(f.seed.seconds, 1)} s; projects and labels over HTTP in ${round(f.seed.setupSeconds, 1)} s); a non-admin user`,
    httpRow(f.bare, undefined, ''),
    ...f.lists.map((list) => httpRow({ ...list, name: `${list.name} (X-Total ${list.total})` }, f.bare, '')),
    ...f.latency.map((x) => [`${x.name} @ 1 connection`, String(x.rps), x.p50.toFixed(1), x.p90.toFixed(1), x.p99.toFixed(1), '', target(x.p90), x.non2xx ? `NON-2XX ${x.non2xx}` : '']),
  ];
}

export const mergeRequestsJson = (f: MergeRequestFigures) => ({ ...f, targets: { p90Ms: P90_TARGET_MS } });
