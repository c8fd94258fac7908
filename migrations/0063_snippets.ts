import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The snippets projection's tables: personal snippets (project_id null) and project snippets.
const statements = [
  `create sequence snippets_id_seq`,
  `create table snippets (
    id integer primary key,
    project_id integer,
    author_id integer not null,
    title text not null,
    file_name text not null,
    content text not null,
    description text,
    visibility text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index snippets_project on snippets (project_id, id) where project_id is not null`,
  `create index snippets_author on snippets (author_id, id)`,
  `create index snippets_public_personal on snippets (created_at, id) where project_id is null and visibility = 'public'`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table snippets_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['snippets_stream_versions', 'snippets']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists snippets_id_seq').execute(db);
}
