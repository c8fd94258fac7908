import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// merge_requests.merge_status_target_sha: the target head the stored merge status was checked
// against (its source head is the row's head_sha: a new version sets the status unchecked).
// The refresh reactor skips a check of heads it already has. Null on rows of older databases
// and while the status is unchecked: the next check runs, as before.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table merge_requests add column merge_status_target_sha text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table merge_requests drop column if exists merge_status_target_sha`.execute(db);
}
