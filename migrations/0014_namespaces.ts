import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The namespaces projection's tables: groups and personal namespaces, groups' custom attributes.
const statements = [
  `create sequence namespaces_id_seq`,
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
  // Read-heavy: no pending list, which every `traversal_ids &&` lookup would scan whole
  // until vacuum flushes it.
  `create index namespaces_traversal on namespaces using gin (traversal_ids) with (fastupdate = off)`,
  `create index namespaces_kind_name on namespaces (kind, name, id)`,
  // GET /groups counts visible groups without a scan of all namespaces.
  `create index namespaces_live_groups on namespaces (name, id) where kind = 'group' and not pending_delete`,
  `create table group_custom_attributes (
    group_id integer not null,
    key text not null,
    value text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    primary key (group_id, key)
  )`,
  `create index group_custom_attributes_key_value on group_custom_attributes (key, value)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table namespaces_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['namespaces_stream_versions', 'group_custom_attributes', 'namespaces']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists namespaces_id_seq').execute(db);
}
