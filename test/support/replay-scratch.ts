import { sql } from 'kysely';
import type { Db } from '../../src/database/database.js';
import { PROJECTORS } from '../../src/projections/registry.js';

// The replay check's scratch schema on PostgreSQL (replay.ts, replayTarget). Its own module,
// without vitest, so that the run's global setup can make it in the template database.

/** Every projector's table. */
export const TABLES = [...new Set(PROJECTORS.flatMap((p) => p.tables))];

export const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The projectors' tables replays write in a scratch schema (PostgreSQL): a copy of each, first on the search path. */
export const SCRATCH = 'forgelog_replay_check';
/** The inline path's rows, as (tbl, r jsonb), beside the copies. */
export const INLINE_ROWS = `${SCRATCH}.replay_check_inline`;
/** Events per transaction of a replay on PostgreSQL, so that each stays short. */
export const EVENTS_PER_TRANSACTION = 250;
/** Tables created per transaction of the scratch schema. */
const TABLES_PER_TRANSACTION = 10;

/**
 * (Re)creates the scratch schema of the check on PostgreSQL (see replayTarget): empty copies
 * of the projectors' tables (`like … including all`, so their unique indexes hold the replays
 * as the real ones hold the inline path) and the table of the inline rows. The test run's
 * global setup makes it once in the template database, after the migrations, so that every
 * database cloned from it has it: creating it per check cost 0.7–1.5 s of DDL, most of the
 * check on a short log.
 */
export async function createReplayScratch(db: Db): Promise<void> {
  await inScratch(db, async (trx) => {
    await sql.raw(`drop schema if exists ${SCRATCH} cascade`).execute(trx);
    await sql.raw(`create schema ${SCRATCH}`).execute(trx);
    await sql.raw(`create table ${INLINE_ROWS} (tbl text not null, r jsonb not null)`).execute(trx);
  });
  for (let i = 0; i < TABLES.length; i += TABLES_PER_TRANSACTION) {
    await inScratch(db, async (trx) => {
      for (const table of TABLES.slice(i, i + TABLES_PER_TRANSACTION))
        await sql.raw(`create table ${SCRATCH}.${quote(table)} (like public.${quote(table)} including all)`).execute(trx);
    });
  }
}

/**
 * A short transaction of the check on PostgreSQL: unqualified table names resolve to the
 * scratch copies first, and its commit does not wait for the disk (a scratch schema lost in a
 * crash is no loss, and the check commits a few dozen transactions).
 */
export async function inScratch<T>(db: Db, run: (trx: Db) => Promise<T>, isolation: 'read committed' | 'repeatable read' = 'read committed'): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel(isolation)
    .execute(async (trx) => {
      await sql`select set_config('search_path', ${`${SCRATCH}, public`}, true), set_config('synchronous_commit', 'off', true)`.execute(trx);
      return run(trx);
    });
}
