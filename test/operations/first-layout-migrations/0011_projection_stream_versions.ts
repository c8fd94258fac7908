import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Per projection, the version of the last event of each stream it applied: the guard that
// makes a replayed event (twice, or an older one after a newer one) change nothing, even
// after the rows it would touch were deleted. One table per projection, rebuilt and swapped
// with the projection's other tables.
const PROJECTIONS = ['users', 'namespaces', 'members', 'projects'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const name of PROJECTIONS) {
    await sql.raw(`create table ${name}_stream_versions (stream_id text primary key, version integer not null check (version > 0))`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of PROJECTIONS) await sql.raw(`drop table if exists ${name}_stream_versions`).execute(db);
}
