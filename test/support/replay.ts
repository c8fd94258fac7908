import { sql } from 'kysely';
import { expect } from 'vitest';
import type { DatabaseHandle, Db } from '../../src/database/database.js';
import { PROJECTED_EVENT_COLUMNS, toLoggedEvent } from '../../src/eventstore/store.js';
import type { LoggedEvent, ProjectedEvent } from '../../src/eventstore/types.js';
import type { Projector } from '../../src/projections/projector.js';
import { applyInOrder, rebuildProjections } from '../../src/projections/rebuild.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { EVENTS_PER_TRANSACTION, INLINE_ROWS, SCRATCH, TABLES, createReplayScratch, inScratch, quote } from './replay-scratch.js';

/**
 * The rows `run` leaves in empty copies of `tables` (made in a scratch schema first on the
 * search path, dropped afterwards): of every table, or of those `read` names.
 */
export async function rowsLeftBy(db: Db, tables: readonly string[], run: (trx: Db) => Promise<void>, read: readonly string[] = tables) {
  return db.transaction().execute(async (trx) => {
    await sql.raw('create schema scratch_rows').execute(trx);
    for (const table of tables) await sql.raw(`create table scratch_rows.${table} (like public.${table} including all)`).execute(trx);
    await sql`select set_config('search_path', 'scratch_rows, public', true)`.execute(trx);
    await run(trx);
    const rows = await snapshotTables(trx, read, 'scratch_rows');
    await sql.raw('drop schema scratch_rows cascade').execute(trx);
    return rows;
  });
}

/** Every row of each table, sorted by all its columns (as text, so any column type sorts). */
export async function snapshotTables(db: Db, tables: readonly string[], schema = 'public'): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  for (const table of [...tables].sort()) {
    const { rows: columns } = await sql<{ name: string }>`
      select attname as name from pg_attribute
       where attrelid = ${`${quote(schema)}.${quote(table)}`}::regclass and attnum > 0 and not attisdropped order by attnum`.execute(db);
    const orderBy = sql.join(columns.map((c) => sql`${sql.ref(c.name)}::text`));
    const { rows } = await sql`select * from ${sql.table(`${schema}.${table}`)} order by ${orderBy}`.execute(db);
    snapshot[table] = rows;
  }
  return snapshot;
}

/**
 * Replay equivalence (DESIGN.md, "Read path"): the rows the projectors' tables hold now equal
 * the rows a rebuild from position 0 produces.
 */
export async function expectReplayEquivalence(handle: DatabaseHandle, projectors: readonly Projector[]): Promise<void> {
  const tables = [...new Set(projectors.flatMap((p) => p.tables))];
  const before = await snapshotTables(handle.db, tables);
  await rebuildProjections(handle, projectors);
  const after = await snapshotTables(handle.db, tables);
  expect(after).toEqual(before);
}

// ───────────────────────────── Replaying a whole log ─────────────────────────────

/** How the replays of `replayLog` pick what they replay again. */
export interface ReplayPlan {
  /** After the `index`th event of the log, which of the `count` earlier events of its stream is applied again. */
  readonly pickEarlier: (index: number, count: number) => number;
  /** Events per page of the batch replay (of the log with every event twice). */
  readonly batchSize: number;
}

/** Rows of a table that one replay and the inline path do not share. */
export interface ReplayMismatch {
  readonly replay: string;
  readonly projector: string;
  readonly table: string;
  /** At most MISMATCHED_ROWS of each side, as JSON objects. */
  readonly onlyInline: readonly Record<string, unknown>[];
  readonly onlyReplayed: readonly Record<string, unknown>[];
}

export interface ReplayReport {
  /** Handled events in the log. */
  readonly events: number;
  /** The projectors that saw at least one of them. */
  readonly exercised: readonly string[];
  /** Earlier events the interleaved replay applied again. */
  readonly reapplied: number;
  readonly mismatches: readonly ReplayMismatch[];
}

const MISMATCHED_ROWS = 5;
const TABLE_OWNERS = new Map(PROJECTORS.flatMap((p) => p.tables.map((table) => [table, p.name] as const)));
const HANDLED_TYPES = [...new Set(PROJECTORS.flatMap((p) => p.handles))];

/** Every row of every projector's table in `schema`, as (tbl, r jsonb). */
const everyRow = (schema: string) =>
  sql.join(
    TABLES.map((table) => sql`select ${sql.lit(table)} as tbl, to_jsonb(t) as r from ${sql.table(`${schema}.${table}`)} t`),
    sql` union all `,
  );
/** Empties every projector's table in `schema` in one statement (a truncate makes new files for each: slower). */
const emptyEvery = (schema: string) => sql.raw(`with ${TABLES.map((table, i) => `d${i} as (delete from ${schema}.${quote(table)})`).join(', ')} select 1`);

/** A few events of a replay, applied in one go. */
interface Step {
  readonly events: number;
  run(trx: Db): Promise<void>;
}

/** Where the replays write (see replayLog): the log, and one replay into emptied tables compared with the inline rows. */
interface ReplayTarget {
  readonly log: readonly LoggedEvent[];
  replay(name: string, steps: Iterable<Step>): Promise<ReplayMismatch[]>;
}

/**
 * Projectors are idempotent (DESIGN.md, "Read path"; issue 9 §3, issue 21 §5): the log the
 * inline path projected, replayed into empty tables — every event twice in a row and an
 * earlier event of the same stream again after it, then the batch paths over pages holding
 * every event twice (then the whole log once more, as one page) — must leave exactly the rows
 * the inline path wrote. The log (gap-free order, as projectors see it) and the inline rows are
 * read in one snapshot. Where the replays write depends on the database (replayTarget).
 * `projectors` are those replayed (every one unless given: a test leaves one out to see the
 * check fail); every projector's tables are compared.
 */
export async function replayLog(handle: Pick<DatabaseHandle, 'db' | 'kind'>, plan: ReplayPlan, projectors: readonly Projector[] = PROJECTORS): Promise<ReplayReport> {
  return replayTarget(handle, async ({ log, replay }) => {
    const types = new Set(log.map((event) => event.type));
    const exercised = projectors.filter((p) => p.handles.some((type) => types.has(type))).map((p) => p.name);
    const mismatches: ReplayMismatch[] = [];
    let reapplied = 0;
    const interleaved = function* (): Iterable<Step> {
      const seen = new Map<string, ProjectedEvent[]>();
      for (const [i, event] of log.entries()) {
        const earlier = seen.get(event.streamId) ?? [];
        const again = earlier.length > 0 ? earlier[plan.pickEarlier(i, earlier.length)] : undefined;
        if (again) reapplied++;
        seen.set(event.streamId, [...earlier, event]);
        yield {
          events: again ? 3 : 2,
          async run(trx) {
            await applyAll(projectors, event, trx);
            await applyAll(projectors, event, trx);
            if (again) await applyAll(projectors, again, trx);
          },
        };
      }
    };
    const batches = function* (): Iterable<Step> {
      const doubled = log.flatMap((event) => [event, event]);
      for (let i = 0; i < doubled.length; i += plan.batchSize) {
        const page = doubled.slice(i, i + plan.batchSize);
        yield { events: page.length, run: (trx) => applyBatches(projectors, page, trx) };
      }
      yield { events: log.length, run: (trx) => applyBatches(projectors, log, trx) };
    };
    if (log.length > 0) {
      mismatches.push(...(await replay('every event twice in a row, then an earlier event of its stream again', interleaved())));
      mismatches.push(...(await replay(`the batch paths, pages of ${plan.batchSize} holding every event twice`, batches())));
    }
    return { events: log.length, exercised, reapplied, mismatches };
  });
}

/**
 * Embedded database: one repeatable-read transaction on the real tables, the inline rows kept
 * in a temporary table, each replay rolled back to a savepoint; nothing is committed, and no
 * table is created per replayed table (which costs seconds there). PGlite is one session of
 * the test file's own, so its long transaction holds nobody back.
 *
 * PostgreSQL: a long write transaction would hold back the gap-free horizon of the whole
 * cluster (DESIGN.md, "Caveats of the gap-free read"), and the workers of every other test
 * file on it would wait. So the replays write the copies of the tables in the scratch schema
 * (createReplayScratch), first on the search path (as a rebuild's shadow tables are), in short
 * transactions of EVENTS_PER_TRANSACTION events; one short repeatable-read transaction reads
 * the log and keeps the inline rows beside the copies; the copies are emptied before each
 * replay and at the end.
 */
async function replayTarget<T>(handle: Pick<DatabaseHandle, 'db' | 'kind'>, body: (target: ReplayTarget) => Promise<T>): Promise<T> {
  const { db } = handle;
  if (handle.kind === 'pglite')
    return db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const log = await readLog(trx);
        if (log.length > 0) await sql`create temporary table replay_inline on commit drop as ${everyRow('public')}`.execute(trx);
        return body({
          log,
          async replay(name, steps) {
            await sql`savepoint replay`.execute(trx);
            await emptyEvery('public').execute(trx);
            for (const step of steps) await step.run(trx);
            const mismatches = await compareWithInline(trx, name, 'public', 'replay_inline');
            await sql`rollback to savepoint replay`.execute(trx);
            return mismatches;
          },
        });
      });

  // A database not cloned from the run's template (or from one older than this code) has none.
  const { rows } = await sql<{ ready: boolean }>`select to_regclass(${INLINE_ROWS}) is not null as ready`.execute(db);
  if (!rows[0]!.ready) await createReplayScratch(db);
  const emptyScratch = () => inScratch(db, async (trx) => {
    await emptyEvery(SCRATCH).execute(trx);
    await sql.raw(`delete from ${INLINE_ROWS}`).execute(trx);
  });
  try {
    const log = await inScratch(db, async (trx) => {
      await sql.raw(`delete from ${INLINE_ROWS}`).execute(trx);
      const log = await readLog(trx);
      if (log.length > 0) await sql`insert into ${sql.raw(INLINE_ROWS)} ${everyRow('public')}`.execute(trx);
      return log;
    }, 'repeatable read');
    return await body({
      log,
      async replay(name, steps) {
        await inScratch(db, (trx) => emptyEvery(SCRATCH).execute(trx));
        let pending: Step[] = [];
        let events = 0;
        const flush = async () => {
          const runs = pending;
          [pending, events] = [[], 0];
          if (runs.length === 0) return;
          await inScratch(db, async (trx) => {
            for (const step of runs) await step.run(trx);
          });
        };
        for (const step of steps) {
          pending.push(step);
          if ((events += step.events) >= EVENTS_PER_TRANSACTION) await flush();
        }
        await flush();
        return compareWithInline(db, name, SCRATCH, INLINE_ROWS);
      },
    });
  } finally {
    await emptyScratch();
  }
}

/** The handled events of the log, in the gap-free order projectors see. */
async function readLog(trx: Db): Promise<LoggedEvent[]> {
  const rows = await trx
    .selectFrom('events')
    .select(PROJECTED_EVENT_COLUMNS)
    .where('event_type', 'in', HANDLED_TYPES)
    .orderBy('transaction_id')
    .orderBy('global_position')
    .execute();
  return rows.map(toLoggedEvent);
}

/** One event through every projector that handles it, in registry order (as the inline path runs them). */
async function applyAll(projectors: readonly Projector[], event: ProjectedEvent, trx: Db) {
  for (const projector of projectors) if (projector.handles.includes(event.type)) await projector.apply(event, trx);
}

/** A batch through every projector's batch path, in registry order, as a rebuild applies a page. */
async function applyBatches(projectors: readonly Projector[], events: readonly ProjectedEvent[], trx: Db) {
  await applyInOrder(projectors, events, trx);
}

/** The rows the tables of `schema` hold now and the inline path's (`inline`) do not share, at most MISMATCHED_ROWS of each side and table, in one statement. */
async function compareWithInline(db: Db, replay: string, schema: string, inline: string): Promise<ReplayMismatch[]> {
  const { rows } = await sql<{ tbl: string; side: 'inline' | 'replayed'; r: Record<string, unknown> }>`
    with replayed as (${everyRow(schema)}),
    differing as (
      (select 'inline' as side, tbl, r from ${sql.raw(inline)} except all select 'inline', tbl, r from replayed)
      union all
      (select 'replayed', tbl, r from replayed except all select 'replayed', tbl, r from ${sql.raw(inline)})
    )
    select tbl, side, r from (select *, row_number() over (partition by tbl, side order by r::text) as n from differing) d
     where n <= ${sql.lit(MISMATCHED_ROWS)} order by tbl, side, n`.execute(db);
  const byTable = new Map<string, { replay: string; projector: string; table: string; onlyInline: Record<string, unknown>[]; onlyReplayed: Record<string, unknown>[] }>();
  for (const { tbl, side, r } of rows) {
    let mismatch = byTable.get(tbl);
    if (!mismatch) byTable.set(tbl, (mismatch = { replay, projector: TABLE_OWNERS.get(tbl)!, table: tbl, onlyInline: [], onlyReplayed: [] }));
    (side === 'inline' ? mismatch.onlyInline : mismatch.onlyReplayed).push(r);
  }
  return [...byTable.values()];
}

/** The mismatches as a reader wants them: replay, projector and table, the first differing rows, and where the first two differ. */
export function describeMismatches(mismatches: readonly ReplayMismatch[]): string {
  return mismatches
    .map(({ replay, projector, table, onlyInline, onlyReplayed }) => {
      const lines = [`${replay}: table ${table} (projector ${projector}) is not what the inline path wrote`];
      for (const row of onlyInline) lines.push(`  only inline:   ${JSON.stringify(row)}`);
      for (const row of onlyReplayed) lines.push(`  only replayed: ${JSON.stringify(row)}`);
      const [inline, replayed] = [onlyInline[0], onlyReplayed[0]];
      if (inline && replayed) {
        const columns = Object.keys(inline).filter((column) => JSON.stringify(inline[column]) !== JSON.stringify(replayed[column]));
        lines.push(`  the first two differ in ${columns.map((c) => `${c}: ${JSON.stringify(inline[c])} inline, ${JSON.stringify(replayed[c])} replayed`).join('; ')}`);
      }
      return lines.join('\n');
    })
    .join('\n');
}
