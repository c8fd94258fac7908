import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The projects projection's tables: projects, their stars and their shares with groups.
const statements = [
  `create sequence projects_id_seq`,
  `create table projects (
    id integer primary key,
    namespace_id integer not null,
    creator_id integer,
    name text not null,
    path text not null,
    name_with_namespace text not null,
    path_with_namespace text not null,
    description text,
    default_branch text,
    visibility text not null default 'private',
    archived boolean not null default false,
    tag_list text[] not null default '{}',
    issues_enabled boolean not null default true,
    merge_requests_enabled boolean not null default true,
    wiki_enabled boolean not null default true,
    jobs_enabled boolean not null default true,
    snippets_enabled boolean not null default true,
    container_registry_enabled boolean not null default true,
    shared_runners_enabled boolean not null default true,
    lfs_enabled boolean not null default true,
    public_jobs boolean not null default true,
    request_access_enabled boolean not null default true,
    star_count integer not null default 0,
    forks_count integer not null default 0,
    open_issues_count integer not null default 0,
    avatar_url text,
    traversal_ids integer[] not null,
    settings jsonb not null default '{}',
    pending_delete boolean not null default false,
    created_at timestamptz not null,
    last_activity_at timestamptz not null,
    updated_at timestamptz not null,
    stream_version integer not null
  )`,
  `create unique index projects_full_path_lower on projects (lower(path_with_namespace))`,
  `create index projects_namespace on projects (namespace_id)`,
  // Read-heavy: no pending list, which every `traversal_ids &&` lookup would scan whole
  // until vacuum flushes it.
  `create index projects_traversal on projects using gin (traversal_ids) with (fastupdate = off)`,
  `create index projects_visibility on projects (visibility, id)`,
  `create index projects_created_at on projects (created_at, id)`,
  `create table project_stars (
    project_id integer not null,
    user_id integer not null,
    created_at timestamptz not null,
    primary key (project_id, user_id)
  )`,
  `create index project_stars_user on project_stars (user_id)`,
  `create table project_group_links (
    project_id integer not null,
    group_id integer not null,
    group_access integer not null,
    expires_at date,
    created_at timestamptz not null,
    primary key (project_id, group_id)
  )`,
  `create index project_group_links_group on project_group_links (group_id)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table projects_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['projects_stream_versions', 'project_group_links', 'project_stars', 'projects']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists projects_id_seq').execute(db);
}
