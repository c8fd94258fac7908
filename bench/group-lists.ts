/**
 * 3. Group lists (bench/README.md): GET /groups and GET /groups/:id/projects over a seeded
 * forest (bench/groups.ts), as an administrator and as a member, beside the bare route.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import { hashPassword } from '../src/security/secrets.js';
import { sealPending } from '../src/eventstore/seal.js';
import { seedGroups, type GroupSeed, type SeedUser } from './groups.js';
import { startApp } from './harness/app.js';
import type { LoadGenerator } from './harness/load-generator.js';
import { cpuMeter, log, round, type CpuSplit } from './harness/meters.js';
import { closeServer, compareScenarios, drained, listenLocal, type HttpFigure, type Scenario } from './harness/scenarios.js';
import { createDatabase, type Cleanups } from './harness/setup.js';
import { CONNECTIONS, EXPLAIN, GROUP_COUNT, GROUP_SLICE_SECONDS, GROUP_USERS, GROUPS_VACUUM, MEMBER_GROUPS, PROJECT_COUNT, SEED_PARALLEL, SEED_WORKERS, UNLOADED_SECONDS } from './harness/settings.js';
import { httpRow, perSecond, ratio, type Row } from './harness/table.js';
import { createUsersDirect, createUsersOverHttp } from './harness/users.js';
import { bareReadApp } from './reads.js';

export interface GroupListFigure extends HttpFigure {
  caller: 'admin' | 'member';
  path: string;
  /** X-Total of the answer (groups or projects the caller may see) and the rows of page 1. */
  total: number;
  rows: number;
  /** The same request at 1 connection (BENCH_UNLOADED_SECONDS): latency without queueing. */
  unloaded?: { rps: number; p50: number; p90: number; p99: number } | undefined;
}

export interface GroupsFigures {
  seed: GroupSeed & { cpu: CpuSplit & { seeders: number }; users: number; usersSeconds: number; analyzeSeconds: number; catchUpSeconds: number; sealSeconds: number; logEvents: number };
  bare: HttpFigure & { unloaded?: { rps: number; p50: number; p90: number; p99: number } | undefined };
  lists: GroupListFigure[];
}

/**
 * GET /groups and GET /groups/:id/projects over BENCH_GROUPS groups and BENCH_PROJECTS
 * projects, as an administrator and as a regular user who is a member of BENCH_MEMBER_GROUPS
 * groups, interleaved with the bare one-SELECT route. Its own database and app (the other
 * phases, the rebuild above all, keep their log), dropped at the end of the phase.
 */
export async function measureGroupLists(gen: LoadGenerator, database: string, cleanups: Cleanups): Promise<GroupsFigures> {
  const name = `${database}_groups`;
  log(`group lists: ${GROUP_COUNT} groups, ${PROJECT_COUNT} projects in database ${name}…`);
  const { url, drop: dropDatabase } = await createDatabase(name, cleanups);
  const app = await startApp(url, cleanups);
  const { handle, runtime, rootToken, barePool, base, statements: counter } = app;

  try {
    // The regular caller (over HTTP, with a token) and the users who own and join the groups.
    let started = performance.now();
    const [member] = await createUsersOverHttp(base, rootToken, 1);
    const memberName = (await sql<{ username: string }>`select username from users where id = ${member!.id}`.execute(handle.db)).rows[0]!.username;
    const label = `owner_${Date.now().toString(36)}`;
    const ownerIds = await createUsersDirect(runtime.app.commands, GROUP_USERS, await hashPassword('benchmark-password'), label);
    const owners: SeedUser[] = ownerIds.map((id) => ({ id, username: `${label}_${id}` }));
    const usersSeconds = (performance.now() - started) / 1000;
    log(`  ${GROUP_USERS} group owners/members through handleCommand, 1 regular user over HTTP: ${round(usersSeconds, 2)} s`);

    log(`  seeding ${GROUP_COUNT} groups and ${PROJECT_COUNT} projects (deciders → appendToStream → inline projectors; ${SEED_WORKERS} processes, ${SEED_PARALLEL} transactions at once)…`);
    const seedCpu = cpuMeter(undefined);
    const seed = await seedGroups(handle.db, url, {
      groups: GROUP_COUNT,
      projects: PROJECT_COUNT,
      users: owners,
      member: { id: member!.id, username: memberName },
      memberGroups: MEMBER_GROUPS,
      workers: SEED_WORKERS,
      parallel: SEED_PARALLEL,
      log,
    });
    // The seeding processes' CPU is in `other` (they are gone when the meter reads /proc): moved to `seeders`.
    const seedTicks = seedCpu();
    const seeders = round(seed.workersCpuSeconds / seed.seconds.total, 2);
    const seedCores = { ...seedTicks, seeders, other: round(Math.max(0, seedTicks.other - seeders), 2) };
    log(
      `  seeded ${seed.events} events in ${round(seed.seconds.total, 2)} s (groups ${round(seed.seconds.groups, 2)} s, projects ${round(seed.seconds.projects, 2)} s): ` +
        `${seed.groups} groups (${seed.topLevel} top-level, depth ≤ ${seed.maxDepth}), ${seed.projects} projects, ${seed.memberships} group memberships, the regular user in ${seed.memberOf}; ${seedCpuNote(seedCores)}`,
    );
    started = performance.now();
    // GIN indexes (traversal_ids) keep new entries in a pending list until it outgrows
    // gin_pending_list_limit or (auto)vacuum flushes it; ANALYZE alone leaves it (BENCH_GROUPS_VACUUM=1 flushes).
    await sql.raw(GROUPS_VACUUM ? 'vacuum analyze' : 'analyze').execute(handle.db);
    const analyzeSeconds = (performance.now() - started) / 1000;
    // The app's followers (reactors) and sealer would otherwise chew through the seeded log
    // during the measurements: bring both up to date first.
    started = performance.now();
    await runtime.worker?.waitUntilCaughtUp({ timeoutMs: 120_000 });
    const catchUpSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    await sealPending(handle.db);
    const sealSeconds = (performance.now() - started) / 1000;
    const logEvents = Number((await sql<{ n: string }>`select count(*) as n from events`.execute(handle.db)).rows[0]!.n);
    log(`  ${GROUPS_VACUUM ? 'vacuum analyze' : 'analyze'} ${round(analyzeSeconds, 2)} s, followers caught up ${round(catchUpSeconds, 2)} s, sealed ${round(sealSeconds, 2)} s; the log holds ${logEvents} events`);
    log(`  targets: group ${seed.group.id} ${seed.group.fullPath} (${seed.group.visibility}, ${seed.group.directProjects} projects of its own); subtree ${seed.subtree.id} ${seed.subtree.fullPath} (${seed.subtree.visibility}, ${seed.subtree.groups} groups, ${seed.subtree.subtreeProjects} projects)`);

    const callers = { admin: rootToken, member: member!.token };
    const lists: { caller: 'admin' | 'member'; path: string; name: string }[] = [];
    const memberLabel = `member of ${seed.memberOf}`;
    for (const [route, path] of [
      ['GET /groups', '/api/v4/groups'],
      [`GET /groups/:id/projects (${seed.group.directProjects} own)`, `/api/v4/groups/${seed.group.id}/projects?include_subgroups=false`],
      [`GET /groups/:id/projects subtree (${seed.subtree.groups} groups)`, `/api/v4/groups/${seed.subtree.id}/projects?include_subgroups=true`],
    ] as const) {
      lists.push({ caller: 'admin', path, name: `${route}, admin` });
      lists.push({ caller: 'member', path, name: `${route}, ${memberLabel}` });
    }

    // One request each first: it must answer 200; its X-Total says what the caller sees.
    const answers = new Map<string, { total: number; rows: number }>();
    for (const l of lists) {
      counter.capture = EXPLAIN ? [] : undefined;
      const response = await fetch(`${base}${l.path}`, { headers: { 'PRIVATE-TOKEN': callers[l.caller] } });
      const captured = counter.capture ?? [];
      counter.capture = undefined;
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${l.name}: ${response.status} ${body.slice(0, 300)}`);
      const answer = { total: Number(response.headers.get('x-total') ?? NaN), rows: (JSON.parse(body) as unknown[]).length };
      answers.set(l.name, answer);
      log(`  ${l.name}: X-Total ${answer.total}, ${answer.rows} rows on page 1, ${body.length} bytes`);
      if (EXPLAIN) await explainStatements(barePool, captured);
    }

    const bareApp = await listenLocal(bareReadApp(barePool).fetch);
    const bareUsers = [1, member!.id, ...ownerIds.slice(0, Math.max(0, CONNECTIONS - 2))];
    const scenarios: Scenario[] = [
      {
        name: 'bare GET /users/:id (1 SELECT)',
        job: { url: `http://127.0.0.1:${bareApp.port}`, requests: bareUsers.map((id) => ({ method: 'GET', path: `/users/${id}` })) },
        traffic: bareApp.traffic,
        pool: barePool,
      },
      ...lists.map(
        (l): Scenario => ({
          name: l.name,
          job: { url: base, requests: [{ method: 'GET', path: l.path, headers: { 'PRIVATE-TOKEN': callers[l.caller] } }] },
          traffic: app.traffic,
          pool: handle.pool!,
          counter,
        }),
      ),
    ];
    log(`  group lists (interleaved slices of ${GROUP_SLICE_SECONDS} s, ${CONNECTIONS} connections)…`);
    const figures = await compareScenarios(gen, scenarios, GROUP_SLICE_SECONDS);
    // The same requests one at a time: latency without the queue of 50 connections.
    const unloaded: ({ rps: number; p50: number; p90: number; p99: number } | undefined)[] = [];
    if (UNLOADED_SECONDS > 0) {
      log(`  the same at 1 connection, ${UNLOADED_SECONDS} s each…`);
      for (const s of scenarios) {
        const r = await gen.run({ ...s.job, connections: 1, seconds: UNLOADED_SECONDS });
        await drained(s.traffic);
        const u = { rps: round(r.rps, r.rps < 10 ? 1 : 0), p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99 };
        log(`    ${s.name}: ${u.rps} req/s, p50 ${u.p50} ms, p90 ${u.p90} ms, p99 ${u.p99} ms`);
        unloaded.push(u);
      }
    }
    await closeServer(bareApp.server);
    return {
      seed: { ...seed, cpu: seedCores, users: GROUP_USERS + 1, usersSeconds, analyzeSeconds, catchUpSeconds, sealSeconds, logEvents },
      bare: { ...figures[0]!, unloaded: unloaded[0] },
      lists: lists.map((l, i) => ({ ...figures[i + 1]!, caller: l.caller, path: l.path, ...answers.get(l.name)!, unloaded: unloaded[i + 1] })),
    };
  } finally {
    await app.close();
    await app.closeBare();
    await dropDatabase();
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

const seedCpuNote = (c: CpuSplit & { seeders: number }) => `cpu node/seeders/pg/other ${c.server}/${c.seeders}/${c.postgres}/${c.other}`;

export function groupListRows(groups: GroupsFigures): Row[] {
  const { seed, bare, lists } = groups;
  const rows: Row[] = [];
  rows.push(
    `3. Group lists — requests/s (${seed.groups} groups, ${seed.projects} projects, ${seed.memberships} group memberships; page 1 of 20; ` +
      `admin = root, member = a regular user in ${seed.memberOf} groups; ${CONNECTIONS} connections in ${lists[0]?.sliceSeconds ?? GROUP_SLICE_SECONDS} s slices, then 1)`,
  );
  const unloadedRow = (name: string, u: { rps: number; p50: number; p90: number; p99: number } | undefined, note: string) => {
    if (u) rows.push([`  ${name}`, String(u.rps), u.p50.toFixed(1), u.p90.toFixed(1), u.p99.toFixed(1), '', '', note]);
  };
  rows.push(httpRow(bare, undefined, ''));
  unloadedRow('└ at 1 connection', bare.unloaded, '');
  for (const l of lists) {
    rows.push(httpRow(l, bare, '', [`X-Total ${l.total}`]));
    unloadedRow('└ at 1 connection', l.unloaded, '');
  }
  rows.push([
    'seed: deciders → appendToStream → inline projectors',
    String(perSecond(seed.events, seed.seconds.total)),
    '',
    '',
    '',
    '',
    '',
    `${seed.events} events in ${round(seed.seconds.total, 1)} s (groups + members ${round(seed.seconds.groups, 1)} s, projects ${round(seed.seconds.projects, 1)} s), ${seed.workers} processes, ${SEED_PARALLEL} transactions at once; ` +
      `${seedCpuNote(seed.cpu)}; then ${GROUPS_VACUUM ? 'vacuum analyze' : 'analyze'} ${round(seed.analyzeSeconds, 1)} s, followers ${round(seed.catchUpSeconds, 1)} s, sealing ${round(seed.sealSeconds, 1)} s; ${seed.users} users by handleCommand/HTTP ${round(seed.usersSeconds, 1)} s`,
  ]);
  rows.push(
    `   targets: group ${seed.group.id} (${seed.group.visibility}, ${seed.group.directProjects} projects of its own), ` +
      `subtree of top-level group ${seed.subtree.id} (${seed.subtree.visibility}, ${seed.subtree.groups} groups, ${seed.subtree.subtreeProjects} projects); ` +
      `${seed.topLevel} top-level groups, depth <= ${seed.maxDepth}`,
  );
  return rows;
}

export const groupListsJson = (groups: GroupsFigures) => ({
  seed: { ...groups.seed, eventsPerSecond: perSecond(groups.seed.events, groups.seed.seconds.total) },
  bare: groups.bare,
  lists: groups.lists.map((l) => ({ ...l, ratioToBare: ratio(l.rps, groups.bare.rps) })),
});
