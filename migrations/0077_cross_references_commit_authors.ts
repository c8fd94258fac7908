import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// A pushed commit's mention is by the user its author email named when it was pushed (GitLab's
// ProcessCommitWorker: `commit.author || user`), which the branch events record from schema
// version 4 on: `author_recorded` says the row's event recorded it, `author_id` is that user
// (null: none, the note is then the pusher's). Rows of older events keep false and null: their
// author is resolved when read. Every row already here is of an older event, so nothing is backfilled.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table cross_references add column author_id integer, add column author_recorded boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table cross_references drop column if exists author_id, drop column if exists author_recorded`.execute(db);
}
