/**
 * 1. Reads (bench/README.md): the bare one-SELECT route, GET /api/v4/users/:id and
 * GET /api/v4/user, interleaved; connection i reads as user i. Target: full >= 60% of bare.
 */
import { Hono } from 'hono';
import type pg from 'pg';
import { tokenDigest } from '../src/security/secrets.js';
import type { BenchApp } from './harness/app.js';
import type { LoadGenerator } from './harness/load-generator.js';
import { log } from './harness/meters.js';
import { closeServer, compareScenarios, listenLocal, type HttpFigure, type Scenario } from './harness/scenarios.js';
import { SLICE_SECONDS, WHATIF } from './harness/settings.js';
import { httpRow, ratio, type Row } from './harness/table.js';
import type { BenchUser } from './harness/users.js';

export interface ReadFigures {
  bare: HttpFigure;
  usersById: HttpFigure;
  currentUser: HttpFigure;
  twoSelects?: HttpFigure;
}

export async function measureReads(gen: LoadGenerator, app: BenchApp, users: readonly BenchUser[]): Promise<ReadFigures> {
  log(`reads (interleaved slices of ${SLICE_SECONDS} s)…`);
  const bareRead = await listenLocal(bareReadApp(app.barePool).fetch);
  const twoSelect = WHATIF ? await listenLocal(twoSelectApp(app.barePool).fetch) : undefined;
  const scenarios: Scenario[] = [
    {
      name: 'bare GET /users/:id (1 SELECT)',
      job: { url: `http://127.0.0.1:${bareRead.port}`, requests: users.map((u) => ({ method: 'GET', path: `/users/${u.id}` })) },
      traffic: bareRead.traffic,
      pool: app.barePool,
    },
    {
      name: 'GET /api/v4/users/:id',
      job: { url: app.base, requests: users.map((u) => ({ method: 'GET', path: `/api/v4/users/${u.id}`, headers: { 'PRIVATE-TOKEN': u.token } })) },
      traffic: app.traffic,
      pool: app.handle.pool!,
      counter: app.statements,
    },
    {
      name: 'GET /api/v4/user',
      job: { url: app.base, requests: users.map((u) => ({ method: 'GET', path: '/api/v4/user', headers: { 'PRIVATE-TOKEN': u.token } })) },
      traffic: app.traffic,
      pool: app.handle.pool!,
      counter: app.statements,
    },
  ];
  if (twoSelect) {
    scenarios.push({
      name: "what-if: /user's 2 SELECTs, bare",
      job: { url: `http://127.0.0.1:${twoSelect.port}`, requests: users.map((u) => ({ method: 'GET', path: '/user', headers: { 'PRIVATE-TOKEN': u.token } })) },
      traffic: twoSelect.traffic,
      pool: app.barePool,
    });
  }
  const [bare, usersById, currentUser, twoSelects] = await compareScenarios(gen, scenarios);
  await closeServer(bareRead.server);
  if (twoSelect) await closeServer(twoSelect.server);
  return { bare: bare!, usersById: usersById!, currentUser: currentUser!, ...(twoSelects ? { twoSelects } : {}) };
}

/** Bare hono route: one SELECT of a users row by id on its own pool. */
export function bareReadApp(barePool: pg.Pool) {
  return new Hono().get('/users/:id', async (c) => {
    const { rows } = await barePool.query('select * from users where id = $1', [Number(c.req.param('id'))]);
    if (rows.length === 0) return c.json({ message: '404 User Not Found' }, 404);
    return c.json(rows[0]);
  });
}

/**
 * What-if (BENCH_WHATIF=1), not the app: GET /user's two statements (token by digest, then
 * its user by id, both `select *`) in a bare route returning the row — the price of the
 * second round trip apart from the HTTP kernel and the entity.
 */
function twoSelectApp(barePool: pg.Pool) {
  return new Hono().get('/user', async (c) => {
    const token = await barePool.query('select * from personal_access_tokens where token_digest = $1', [tokenDigest(c.req.header('private-token') ?? '')]);
    const row = token.rows[0] as { user_id: number } | undefined;
    if (!row) return c.json({ message: '401 Unauthorized' }, 401);
    const { rows } = await barePool.query('select * from users where id = $1', [row.user_id]);
    return c.json(rows[0]);
  });
}

export function readRows(reads: ReadFigures): Row[] {
  return [
    '1. Reads — requests/s (autocannon; connection i uses user i: its token, its id)',
    httpRow(reads.bare, undefined, ''),
    httpRow(reads.usersById, reads.bare, '>= 60%'),
    httpRow(reads.currentUser, reads.bare, '>= 60%'),
    ...(reads.twoSelects ? [httpRow(reads.twoSelects, reads.bare, '', ['not the app: BENCH_WHATIF'])] : []),
  ];
}

export const readsJson = (reads: ReadFigures) => ({
  bare: reads.bare,
  usersById: { ...reads.usersById, ratioToBare: ratio(reads.usersById.rps, reads.bare.rps) },
  currentUser: { ...reads.currentUser, ratioToBare: ratio(reads.currentUser.rps, reads.bare.rps) },
  ...(reads.twoSelects ? { whatIfTwoSelects: { ...reads.twoSelects, ratioToBare: ratio(reads.twoSelects.rps, reads.bare.rps) } } : {}),
});
