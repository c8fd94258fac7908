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

// A database that has memberships already: the rows they give, from the read tables as they
// are, so that no request between this migration and the projection's first rebuild (which a
// worker runs for a projection it has no checkpoint of) finds a level missing.
const fill = [
  `insert into project_authorizations (user_id, project_id, access_level, expires_at)
   select user_id, project_id, access_level, case when bool_or(expires_at is null) then null else max(expires_at) end from (
     select m.user_id, m.source_id as project_id, m.access_level, m.expires_at from members m where m.source_type = 'Project'
     union all
     select m.user_id, p.id, m.access_level, m.expires_at from projects p
       join members m on m.source_type = 'Namespace' and m.source_id = any(p.traversal_ids)
     union all
     select m.user_id, l.project_id, least(l.group_access, m.access_level), least(l.expires_at, m.expires_at)
       from project_group_links l join namespaces g on g.id = l.group_id
       join members m on m.source_type = 'Namespace' and m.source_id = any(g.traversal_ids)
     union all
     select n.owner_id, p.id, 40, null::date from projects p join namespaces n on n.id = p.namespace_id and n.kind = 'user'
   ) w group by user_id, project_id, access_level`,
  `insert into group_authorizations (user_id, group_id, access_level, expires_at)
   select m.user_id, d.id, m.access_level, case when bool_or(m.expires_at is null) then null else max(m.expires_at) end
     from namespaces d join members m on m.source_type = 'Namespace' and m.source_id = any(d.traversal_ids)
    where d.kind = 'group' group by m.user_id, d.id, m.access_level`,
  `insert into authorization_group_links (group_id, project_id) select group_id, project_id from project_group_links`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of [...statements, ...fill]) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['authorizations_stream_versions', 'authorization_group_links', 'group_authorizations', 'project_authorizations']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
