import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The feature_flags projection's tables: the feature flags of projects and their scopes (specs).
const statements = [
  `create sequence feature_flags_id_seq`,
  `create sequence feature_flag_scopes_id_seq`,
  `create table feature_flags (
    id integer primary key,
    project_id integer not null,
    name text not null,
    description text,
    active boolean not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index feature_flags_project_name on feature_flags (project_id, name)`,
  `create table feature_flag_scopes (
    id integer primary key,
    feature_flag_id integer not null,
    project_id integer not null,
    environment_scope text not null,
    active boolean not null,
    strategies jsonb not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index feature_flag_scopes_flag on feature_flag_scopes (feature_flag_id, id)`,
  `create index feature_flag_scopes_project on feature_flag_scopes (project_id)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table feature_flags_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['feature_flags_stream_versions', 'feature_flag_scopes', 'feature_flags']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  for (const sequence of ['feature_flag_scopes_id_seq', 'feature_flags_id_seq']) await sql.raw(`drop sequence if exists ${sequence}`).execute(db);
}
