import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The epics projection's tables (epics, each group's last iid) and the todos projection's
// (todos: epics are their first targets, so they arrive together). Dates are 'YYYY-MM-DD' text:
// plain days, compared as text, never shifted by a time zone.
const statements = [
  `create sequence epics_id_seq`,
  `create table epics (
    id integer primary key,
    group_id integer not null,
    iid integer not null,
    parent_id integer,
    author_id integer not null,
    title text not null,
    description text,
    labels text[] not null,
    state text not null,
    start_date_is_fixed boolean not null,
    start_date_fixed text,
    due_date_is_fixed boolean not null,
    due_date_fixed text,
    start_date_from_inherited_source text,
    due_date_from_inherited_source text,
    start_date text,
    due_date text,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    closed_at timestamptz,
    unique (group_id, iid)
  )`,
  `create index epics_group_created on epics (group_id, created_at)`,
  `create index epics_parent on epics (parent_id) where parent_id is not null`,
  // The last iid each group handed out: GitLab's InternalId, never reused after a deletion.
  `create table epic_iids (group_id integer primary key, last_iid integer not null)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table epics_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
  `create sequence todos_id_seq`,
  `create table todos (
    id integer primary key,
    user_id integer not null,
    author_id integer not null,
    action text not null,
    target_type text not null,
    target_id integer not null,
    project_id integer,
    group_id integer,
    state text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index todos_user on todos (user_id, state, id)`,
  `create index todos_target on todos (target_type, target_id)`,
  `create table todos_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['todos_stream_versions', 'todos', 'epics_stream_versions', 'epic_iids', 'epics']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  for (const sequence of ['todos_id_seq', 'epics_id_seq']) await sql.raw(`drop sequence if exists ${sequence}`).execute(db);
}
