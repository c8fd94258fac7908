import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The audit feed (GET /audit_events) reads the log by event type, newest first, and counts
// its records: an index on (event_type, global_position) makes the count an index-only scan
// per type and the page a scan of that index, instead of a sequential scan of the log.
export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('create index events_type_position on events (event_type, global_position)').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop index if exists events_type_position').execute(db);
}
