import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Merge requests from forks: a push to a fork's branch refreshes the merge requests whose
// source it is, in whatever project they target, so they are found by source project and branch.
// And the merge ref's head and its parents (GET …/merge_ref), kept by the merge requests projection.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index merge_requests_source_project_branch on merge_requests (source_project_id, source_branch)`.execute(db);
  await sql`alter table merge_requests add column merge_ref_sha text, add column merge_ref_target_sha text, add column merge_ref_source_sha text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table merge_requests drop column if exists merge_ref_sha, drop column if exists merge_ref_target_sha, drop column if exists merge_ref_source_sha`.execute(db);
  await sql`drop index if exists merge_requests_source_project_branch`.execute(db);
}
