import { sql, type Kysely } from 'kysely';

// Read tables of the permission backbone: namespaces (groups and personal namespaces),
// projects, memberships, access requests, stars and project shares.
const statements = [
  `create sequence namespaces_id_seq`,
  `create sequence projects_id_seq`,
  `create table namespaces (
    id integer primary key,
    kind text not null,
    name text not null,
    path text not null,
    full_name text not null,
    full_path text not null,
    parent_id integer,
    owner_id integer,
    traversal_ids integer[] not null,
    description text not null default '',
    visibility text not null default 'private',
    share_with_group_lock boolean not null default false,
    require_two_factor_authentication boolean not null default false,
    two_factor_grace_period integer not null default 48,
    project_creation_level text not null default 'developer',
    auto_devops_enabled boolean,
    subgroup_creation_level text not null default 'maintainer',
    emails_disabled boolean,
    mentions_disabled boolean,
    lfs_enabled boolean not null default true,
    request_access_enabled boolean not null default true,
    avatar_url text,
    file_template_project_id integer,
    shared_runners_minutes_limit integer,
    extra_shared_runners_minutes_limit integer,
    runners_token text,
    pending_delete boolean not null default false,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    stream_version integer not null
  )`,
  `create unique index namespaces_full_path_lower on namespaces (lower(full_path))`,
  `create index namespaces_parent on namespaces (parent_id)`,
  `create index namespaces_owner on namespaces (owner_id) where owner_id is not null`,
  `create index namespaces_traversal on namespaces using gin (traversal_ids)`,
  `create index namespaces_kind_name on namespaces (kind, name, id)`,
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
  `create index projects_traversal on projects using gin (traversal_ids)`,
  `create index projects_visibility on projects (visibility, id)`,
  `create index projects_created_at on projects (created_at, id)`,
  `create table members (
    source_type text not null,
    source_id integer not null,
    user_id integer not null,
    access_level integer not null,
    expires_at date,
    created_by_id integer,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    primary key (source_type, source_id, user_id)
  )`,
  `create index members_user on members (user_id, source_type, source_id)`,
  `create table access_requests (
    source_type text not null,
    source_id integer not null,
    user_id integer not null,
    requested_at timestamptz not null,
    primary key (source_type, source_id, user_id)
  )`,
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
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['project_group_links', 'project_stars', 'access_requests', 'members', 'projects', 'namespaces']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists namespaces_id_seq, projects_id_seq').execute(db);
}
