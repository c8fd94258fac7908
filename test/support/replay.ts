import { sql } from 'kysely';
import { expect } from 'vitest';
import type { DatabaseHandle, Db } from '../../src/database/database.js';
import type { Projector } from '../../src/projections/projector.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';

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
