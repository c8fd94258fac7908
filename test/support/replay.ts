import { sql } from 'kysely';
import { expect } from 'vitest';
import type { DatabaseHandle, Db } from '../../src/database/database.js';
import { PROJECTED_EVENT_COLUMNS, toLoggedEvent } from '../../src/eventstore/store.js';
import type { ProjectedEvent } from '../../src/eventstore/types.js';
import type { Projector } from '../../src/projections/projector.js';
import { applyEvents, rebuildProjections } from '../../src/projections/rebuild.js';
import { PROJECTORS } from '../../src/projections/registry.js';

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

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

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
const TABLES = [...TABLE_OWNERS.keys()];
const HANDLED_TYPES = [...new Set(PROJECTORS.flatMap((p) => p.handles))];

/** Every row of every projector's table, as (tbl, r jsonb). */
const EVERY_ROW = sql.join(
  TABLES.map((table) => sql`select ${sql.lit(table)} as tbl, to_jsonb(t) as r from ${sql.table(table)} t`),
  sql` union all `,
);
const EMPTY_EVERY_TABLE = sql.raw(`with ${TABLES.map((table, i) => `d${i} as (delete from ${table})`).join(', ')} select 1`);

/**
 * Projectors are idempotent (DESIGN.md, "Read path"; issue 9 §3, issue 21 §5): the log the
 * inline path projected, replayed into empty tables — every event twice in a row, an earlier
 * event of the same stream again after each event, and the batch paths over pages holding
 * every event twice (then the whole log once more, as one page) — must leave exactly the rows
 * the inline path wrote.
 *
 * All in one repeatable-read transaction, so the log (gap-free order, as projectors see it)
 * and the inline rows are one snapshot: the inline rows are kept in a temporary table, then
 * each replay empties the projectors' own tables, runs, is compared with them and is rolled
 * back to a savepoint. No DDL per table, and the replays run on the real tables with their
 * indexes; nothing of it is ever committed. `projectors` are those replayed (every one unless
 * given: a test leaves one out to see the check fail); every projector's tables are compared.
 */
export async function replayLog(db: Db, plan: ReplayPlan, projectors: readonly Projector[] = PROJECTORS): Promise<ReplayReport> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const rows = await trx
        .selectFrom('events')
        .select(PROJECTED_EVENT_COLUMNS)
        .where('event_type', 'in', HANDLED_TYPES)
        .orderBy('transaction_id')
        .orderBy('global_position')
        .execute();
      const log = rows.map(toLoggedEvent);
      const types = new Set(log.map((event) => event.type));
      const exercised = projectors.filter((p) => p.handles.some((type) => types.has(type))).map((p) => p.name);
      if (log.length === 0) return { events: 0, exercised, reapplied: 0, mismatches: [] };

      await sql`create temporary table replay_inline on commit drop as ${EVERY_ROW}`.execute(trx);
      const mismatches: ReplayMismatch[] = [];
      const replay = async (name: string, run: () => Promise<void>) => {
        await sql`savepoint replay`.execute(trx);
        await EMPTY_EVERY_TABLE.execute(trx);
        await run();
        mismatches.push(...(await compareWithInline(trx, name)));
        await sql`rollback to savepoint replay`.execute(trx);
      };

      await replay('every event twice in a row', async () => {
        for (const event of log) {
          await applyAll(projectors, event, trx);
          await applyAll(projectors, event, trx);
        }
      });
      let reapplied = 0;
      await replay('after each event, an earlier event of its stream again', async () => {
        const seen = new Map<string, ProjectedEvent[]>();
        for (const [i, event] of log.entries()) {
          await applyAll(projectors, event, trx);
          const earlier = seen.get(event.streamId) ?? [];
          if (earlier.length > 0) {
            await applyAll(projectors, earlier[plan.pickEarlier(i, earlier.length)]!, trx);
            reapplied++;
          }
          seen.set(event.streamId, [...earlier, event]);
        }
      });
      await replay(`the batch paths, pages of ${plan.batchSize} holding every event twice`, async () => {
        const doubled = log.flatMap((event) => [event, event]);
        for (let i = 0; i < doubled.length; i += plan.batchSize) {
          const page = doubled.slice(i, i + plan.batchSize);
          for (const projector of projectors) await applyEvents(projector, page, trx);
        }
        for (const projector of projectors) await applyEvents(projector, log, trx);
      });
      return { events: log.length, exercised, reapplied, mismatches };
    });
}

/** One event through every projector that handles it, in registry order (as the inline path runs them). */
async function applyAll(projectors: readonly Projector[], event: ProjectedEvent, trx: Db) {
  for (const projector of projectors) if (projector.handles.includes(event.type)) await projector.apply(event, trx);
}

/** The rows the tables hold now and the inline path's (replay_inline) do not share, at most MISMATCHED_ROWS of each side and table, in one statement. */
async function compareWithInline(trx: Db, replay: string): Promise<ReplayMismatch[]> {
  const { rows } = await sql<{ tbl: string; side: 'inline' | 'replayed'; r: Record<string, unknown> }>`
    with replayed as (${EVERY_ROW}),
    differing as (
      (select 'inline' as side, tbl, r from replay_inline except all select 'inline', tbl, r from replayed)
      union all
      (select 'replayed', tbl, r from replayed except all select 'replayed', tbl, r from replay_inline)
    )
    select tbl, side, r from (select *, row_number() over (partition by tbl, side order by r::text) as n from differing) d
     where n <= ${sql.lit(MISMATCHED_ROWS)} order by tbl, side, n`.execute(trx);
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
