import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Forks (GitLab's fork_network_members.forked_from_project_id): the project a project was
// forked from, kept by the projects projection from the fork's events; forks_count (already a
// column) is counted from it. The index answers GET /projects/:id/forks and the count.
const statements = [
  `alter table projects add column forked_from_project_id integer`,
  `create index projects_forked_from_project_id on projects (forked_from_project_id) where forked_from_project_id is not null`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop index if exists projects_forked_from_project_id').execute(db);
  await sql.raw('alter table projects drop column if exists forked_from_project_id').execute(db);
}
