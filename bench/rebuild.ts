/**
 * 5. Rebuild (bench/README.md): seeds the log to BENCH_REBUILD_EVENTS user events, then
 * replays it with rebuildProjections into fresh tables, beside the ceiling of only reading
 * it. Target: >= 50,000 events/s.
 */
import { installEventTypes } from '../src/commands/kernel/aggregates.js';
import { sql } from 'kysely';
import { DEFAULT_PROFILE } from '../src/commands/users.js';
import { openDatabase, type Db } from '../src/database/database.js';
import { userEventIndex, userStreamId, type UserEvent } from '../src/domain/users.js';
import { GENESIS_HASH, PROJECTED_EVENT_COLUMNS, appendToStream, toLoggedEvent, toStoredEvent } from '../src/eventstore/store.js';
import type { Projector } from '../src/projections/projector.js';
import { rebuildProjections } from '../src/projections/rebuild.js';
import { PROJECTORS } from '../src/projections/registry.js';
import { usersProjector } from '../src/projections/users.js';
import type { BenchApp } from './harness/app.js';
import { countStatements, cpuMeter, log, round, rssAfter, snapshotCounter, traceStatements, type CpuSplit } from './harness/meters.js';
import { inParallel, once, reserveIds, type Cleanups } from './harness/setup.js';
import { BASELINE, REBUILD_EVENTS, SEED_ORDER, SEED_PARALLEL } from './harness/settings.js';
import { cpuNote, perSecond, type Row } from './harness/table.js';

export interface RebuildFigures {
  logEvents: number;
  seed: { events: number; seconds: number };
  scan: { events: number; seconds: number };
  baseline?: { events: number; seconds: number; statementsPerEvent: number; cpu: CpuSplit };
  rebuildProjections: { events: number; seconds: number; projectors: string[]; statementsPerEvent: number; cpu: CpuSplit };
}

export async function measureRebuild(app: BenchApp, url: string, cleanups: Cleanups): Promise<RebuildFigures> {
  // Like `forgelog rebuild`: on its own, without the serve process's workers and sealer
  // following the log meanwhile.
  log('rebuild: closing the HTTP app and its workers; seeding and rebuilding on a fresh pool…');
  await app.close();
  installEventTypes();
  const rebuildHandle = await openDatabase({ databaseUrl: url });
  cleanups.push(once(() => rebuildHandle.close()));
  const rebuildStatements = countStatements(rebuildHandle.pool!);
  const handled = usersProjector.handles;
  const countHandled = async () =>
    Number((await sql<{ n: string }>`select count(*) as n from events where event_type in (${sql.join(handled)})`.execute(rebuildHandle.db)).rows[0]!.n);
  const existing = await countHandled();
  const seedUsers = Math.max(0, Math.ceil((REBUILD_EVENTS - existing) / 5));
  log(`rebuild: seeding ${seedUsers} user streams × 5 events (log holds ${existing} user events)…`);
  const seed = await seedUserEvents(rebuildHandle.db, seedUsers);
  await sql`analyze events`.execute(rebuildHandle.db);
  const logEvents = await countHandled();
  log(`  seeded ${seed.events} events in ${round(seed.seconds, 2)} s; log holds ${logEvents} user events`);
  rssAfter('seed');

  const scan = await scanLog(rebuildHandle.db, handled);
  log(`  log scan: ${scan.events} events in ${round(scan.seconds, 2)} s`);

  let baseline: RebuildFigures['baseline'];
  if (BASELINE) {
    log('  baseline: replay through usersProjector.apply, one transaction…');
    const before = snapshotCounter(rebuildStatements);
    const cpu = cpuMeter(undefined);
    const replayed = await replayBaseline(rebuildHandle.db, usersProjector);
    baseline = { ...replayed, statementsPerEvent: round((rebuildStatements.statements - before.statements) / Math.max(1, replayed.events), 3), cpu: cpu() };
    log(`  baseline: ${baseline.events} events in ${round(baseline.seconds, 2)} s, ${baseline.statementsPerEvent} stmts/event`);
    traceStatements('replayed event', before, rebuildStatements, replayed.events);
    rssAfter('replay baseline');
  }
  const projectors = PROJECTORS.filter((p) => p.tables.length > 0);
  log(`  rebuildProjections(${projectors.map((p) => p.name).join(', ')})…`);
  let lastProgress = performance.now();
  const before = snapshotCounter(rebuildStatements);
  const cpu = cpuMeter(undefined);
  const started = performance.now();
  const result = await rebuildProjections(rebuildHandle, projectors, {
    onProgress: (done, total) => {
      if (performance.now() - lastProgress > 5000) {
        lastProgress = performance.now();
        log(`    ${done}/${total}`);
      }
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const { events } = result;
  const statementsPerEvent = round((rebuildStatements.statements - before.statements) / Math.max(1, events), 3);
  const rebuilt = { events, seconds, projectors: projectors.map((p) => p.name), statementsPerEvent, cpu: cpu() };
  log(`  rebuildProjections: ${events} events in ${round(seconds, 2)} s, ${statementsPerEvent} stmts/event`);
  traceStatements('replayed event', before, rebuildStatements, events);
  rssAfter('rebuild');
  return { logEvents, seed, scan, ...(baseline ? { baseline } : {}), rebuildProjections: rebuilt };
}

/**
 * Seeds user streams of 5 events (UserCreated + 4 × UserStatusSet) through appendToStream,
 * 500 streams per transaction, SEED_PARALLEL transactions at once. Log order:
 * - `streams` (default): each user's five events together, user after user — creations and
 *   updates alternate in the log, as when users come and go over time;
 * - `waves` (BENCH_SEED=waves): every creation first, then four waves of status changes —
 *   long runs of one kind, the friendliest order for batching.
 */
async function seedUserEvents(db: Db, users: number): Promise<{ events: number; seconds: number }> {
  if (users <= 0) return { events: 0, seconds: 0 };
  const first = await reserveIds(db, 'users_id_seq', users);
  const firstNamespace = await reserveIds(db, 'namespaces_id_seq', users);
  const chunk = 500;
  const chunks = Array.from({ length: Math.ceil(users / chunk) }, (_, i) => i);
  const metadata = { actor_id: 1, actor_username: 'root', request_id: null };
  const heads = new Map<number, { version: number; hash: string }>();
  const created = (id: number) => {
    const username = `seed_${id}`;
    // The real UserCreated shape (asserted, like the command above, to survive field additions).
    return {
      type: 'UserCreated',
      data: { ...DEFAULT_PROFILE, id, namespace_id: firstNamespace + (id - first), name: `Seed ${id}`, username, email: `${username}@example.com`, password_hash: null, confirmed: true, password_reset_required: false },
    } as UserEvent;
  };
  const status = (id: number, n: number): UserEvent => ({ type: 'UserStatusSet', data: { id, emoji: 'coffee', message: `status ${n}`, message_html: `status ${n}` } });
  const started = performance.now();
  let events = 0;
  const wave = (eventsOf: (id: number) => UserEvent[]) =>
    inParallel(chunks, SEED_PARALLEL, async (c) => {
      await db.transaction().execute(async (trx) => {
        for (let id = first + c * chunk; id < Math.min(first + (c + 1) * chunk, first + users); id++) {
          const head = heads.get(id);
          const stored = await appendToStream(trx, {
            streamId: userStreamId(id),
            expectedVersion: head?.version ?? 0,
            headHash: head?.hash ?? GENESIS_HASH,
            events: eventsOf(id).map((event) => ({ type: event.type, data: event.data, index: userEventIndex(event) })),
            metadata,
            occurredAt: new Date(),
          });
          heads.set(id, { version: stored.at(-1)!.streamVersion, hash: stored.at(-1)!.hash });
          events += stored.length;
        }
      });
    });
  if (SEED_ORDER === 'waves') {
    await wave((id) => [created(id)]);
    for (const n of [1, 2, 3, 4]) await wave((id) => [status(id, n)]);
  } else {
    await wave((id) => [created(id), ...[1, 2, 3, 4].map((n) => status(id, n))]);
  }
  return { events, seconds: (performance.now() - started) / 1000 };
}

/**
 * Baseline: replay every user event through the inline users projector's `apply`, one
 * event at a time, in ONE transaction, into empty copies of its tables (schema
 * bench_replay, search_path like the real rebuild), then throw the copies away.
 */
async function replayBaseline(db: Db, projector: Projector): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let events = 0;
  await db.transaction().execute(async (trx) => {
    await sql.raw('drop schema if exists bench_replay cascade').execute(trx);
    await sql.raw('create schema bench_replay').execute(trx);
    for (const table of projector.tables) await sql.raw(`create table bench_replay.${table} (like public.${table} including all)`).execute(trx);
    await sql`select set_config('search_path', 'bench_replay, public', true)`.execute(trx);
    let after = '0';
    for (;;) {
      const rows = await trx
        .selectFrom('events')
        .selectAll()
        .where('global_position', '>', after)
        .where('event_type', 'in', projector.handles)
        .orderBy('global_position')
        .limit(5000)
        .execute();
      for (const row of rows) await projector.apply(toStoredEvent(row), trx);
      events += rows.length;
      if (rows.length < 5000) break;
      after = rows.at(-1)!.global_position;
    }
    await sql.raw('drop schema bench_replay cascade').execute(trx);
  });
  return { events, seconds: (performance.now() - started) / 1000 };
}

/**
 * Ceiling of any rebuild: page through the user events in gap-free order (pages of 5000,
 * the columns a projector reads + toLoggedEvent, as rebuildProjections' bulk phase reads
 * them) without applying them.
 */
async function scanLog(db: Db, types: readonly string[]): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let events = 0;
  let after = { tx: '0', pos: '0' };
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select(PROJECTED_EVENT_COLUMNS)
      .where(sql<boolean>`(transaction_id, global_position) > (${after.tx}::xid8, ${after.pos}::bigint)`)
      .where('event_type', 'in', types)
      .orderBy('transaction_id')
      .orderBy('global_position')
      .limit(5000)
      .execute();
    const stored = rows.map(toLoggedEvent);
    events += stored.length;
    if (rows.length < 5000) break;
    after = { tx: stored.at(-1)!.transactionId, pos: stored.at(-1)!.globalPosition };
  }
  return { events, seconds: (performance.now() - started) / 1000 };
}

export function rebuildRows(rebuild: RebuildFigures): Row[] {
  const { seed, scan, baseline, rebuildProjections: real } = rebuild;
  const rows: Row[] = [];
  rows.push(`5. Rebuild — events/s (the log holds ${rebuild.logEvents} user events)`);
  rows.push([
    SEED_ORDER === 'waves' ? 'seed: appendToStream, in waves' : 'seed: appendToStream, 5-event streams',
    String(perSecond(seed.events, seed.seconds)),
    '',
    '',
    '',
    '',
    '',
    `${seed.events} events in ${round(seed.seconds, 2)} s, ${SEED_PARALLEL} parallel transactions of 500 streams, log order: ${SEED_ORDER === 'waves' ? 'all creations, then 4 waves of status changes' : "each user's 5 events together"}`,
  ]);
  rows.push(['ceiling: read the log in pages, no apply', String(perSecond(scan.events, scan.seconds)), '', '', '', '', '', `${scan.events} events in ${round(scan.seconds, 2)} s (projected columns + toLoggedEvent, pages of 5000)`]);
  if (baseline) rows.push(['baseline: apply() per event, 1 trx', String(perSecond(baseline.events, baseline.seconds)), '', '', '', '', '>= 50k', `${baseline.events} events in ${round(baseline.seconds, 2)} s, ${baseline.statementsPerEvent} stmts/event, ${cpuNote(baseline.cpu)}`]);
  rows.push([`rebuildProjections(${real.projectors.join(', ')})`, String(perSecond(real.events, real.seconds)), '', '', '', '', '>= 50k', `${real.events} events in ${round(real.seconds, 2)} s, ${real.statementsPerEvent} stmts/event, ${cpuNote(real.cpu)}`]);
  return rows;
}

export const rebuildJson = (rebuild: RebuildFigures) => ({
  logEvents: rebuild.logEvents,
  seed: { ...rebuild.seed, seconds: round(rebuild.seed.seconds, 2), eventsPerSecond: perSecond(rebuild.seed.events, rebuild.seed.seconds) },
  scan: { ...rebuild.scan, seconds: round(rebuild.scan.seconds, 2), eventsPerSecond: perSecond(rebuild.scan.events, rebuild.scan.seconds) },
  baseline: rebuild.baseline && { ...rebuild.baseline, seconds: round(rebuild.baseline.seconds, 2), eventsPerSecond: perSecond(rebuild.baseline.events, rebuild.baseline.seconds) },
  rebuildProjections: {
    ...rebuild.rebuildProjections,
    seconds: round(rebuild.rebuildProjections.seconds, 2),
    eventsPerSecond: perSecond(rebuild.rebuildProjections.events, rebuild.rebuildProjections.seconds),
  },
});
