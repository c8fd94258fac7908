import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// GitLab's merge_requests.merge_error: the last rebase's failure ("Rebase failed. Please rebase
// locally"), projected from MergeRequestRebaseFailed.
export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('alter table merge_requests add column merge_error text').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('alter table merge_requests drop column if exists merge_error').execute(db);
}
