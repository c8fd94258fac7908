import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The authorizations projection (GitLab's project_authorizations, and the same for groups): a
// user's access levels on a project or group over every way in, kept as rows so that a request
// reads them by key instead of recomputing the closure of the caller's memberships. One row per
// (user, target, level) with the latest expiry among the ways in at that level (null: never),
// so the level on a date is the highest row not expired on it.
const statements = [
  `create table project_authorizations (
    user_id integer not null,
    project_id integer not null,
    access_level integer not null,
    expires_at date,
    primary key (user_id, project_id, access_level)
  )`,
  `create index project_authorizations_project on project_authorizations (project_id)`,
  `create table group_authorizations (
    user_id integer not null,
    group_id integer not null,
    access_level integer not null,
    expires_at date,
    primary key (user_id, group_id, access_level)
  )`,
  `create index group_authorizations_group on group_authorizations (group_id)`,
  // The shares the rows above came through, by group: when a group is deleted its links are
  // gone from project_group_links, and these name the projects to recompute.
  `create table authorization_group_links (
    group_id integer not null,
    project_id integer not null,
    primary key (group_id, project_id)
  )`,
  `create table authorizations_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['authorizations_stream_versions', 'authorization_group_links', 'group_authorizations', 'project_authorizations']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
