import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// POST /projects/:id/share answers the link's own id (GitLab's Entities::ProjectGroupLink), so
// project_group_links gets an id, allocated at command time from project_group_links_id_seq
// and carried by the creation event. Rows written before the share API (none come from the
// log) take one from the sequence as the column is added.
export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('create sequence project_group_links_id_seq').execute(db);
  await sql.raw(`alter table project_group_links add column id integer not null default nextval('project_group_links_id_seq')`).execute(db);
  await sql.raw('alter table project_group_links alter column id drop default').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('alter table project_group_links drop column if exists id').execute(db);
  await sql.raw('drop sequence if exists project_group_links_id_seq').execute(db);
}
