import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The deploy keys projection's tables: the keys, the projects each is enabled in, and the key ids.
const statements = [
  `create sequence deploy_keys_id_seq`,
  `create table deploy_keys (
    id integer primary key,
    user_id integer,
    title text not null,
    key text not null,
    fingerprint text not null,
    fingerprint_sha256 text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index deploy_keys_key on deploy_keys (key)`,
  `create table deploy_keys_projects (
    deploy_key_id integer not null,
    project_id integer not null,
    can_push boolean not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    primary key (deploy_key_id, project_id)
  )`,
  `create index deploy_keys_projects_project on deploy_keys_projects (project_id, created_at)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table deploy_keys_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['deploy_keys_stream_versions', 'deploy_keys_projects', 'deploy_keys']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists deploy_keys_id_seq').execute(db);
}
