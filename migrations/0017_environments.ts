import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The environments projection's tables: the environments of projects.
const statements = [
  `create sequence environments_id_seq`,
  `create table environments (
    id integer primary key,
    project_id integer not null,
    name text not null,
    slug text not null,
    external_url text,
    state text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index environments_project on environments (project_id, id)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table environments_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['environments_stream_versions', 'environments']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists environments_id_seq').execute(db);
}
