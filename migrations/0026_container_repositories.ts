import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The container registry projection's tables: the repositories of projects and their tags.
const statements = [
  `create sequence container_repositories_id_seq`,
  `create table container_repositories (
    id integer primary key,
    project_id integer not null,
    name text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index container_repositories_project on container_repositories (project_id, id)`,
  `create table container_repository_tags (
    repository_id integer not null,
    project_id integer not null,
    name text not null,
    digest text not null,
    revision text,
    total_size bigint,
    created_at timestamptz not null,
    primary key (repository_id, name)
  )`,
  `create index container_repository_tags_project on container_repository_tags (project_id)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table container_repositories_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['container_repositories_stream_versions', 'container_repository_tags', 'container_repositories']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists container_repositories_id_seq').execute(db);
}
