import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// A moved issue's notes are copied onto the new issue (Issues::MoveService), its system notes
// among them: those copies are rows, as GitLab's are, marked `system`.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table notes add column system boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table notes drop column if exists system`.execute(db);
}
