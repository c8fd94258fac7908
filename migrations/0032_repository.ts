import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The repository: git objects (content-addressed, append-only, written by the commands in
// the transaction of the event that references them; not a projection) and the repository
// projection's branches.
const statements = [
  `create table repository_objects (
    project_id integer not null,
    sha text not null check (sha ~ '^[0-9a-f]{40}$'),
    type text not null check (type in ('blob', 'tree', 'commit')),
    size integer not null,
    content bytea not null,
    primary key (project_id, sha)
  )`,
  `create function repository_objects_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'repository_objects is append-only' using errcode = '55000';
    end
  $$`,
  `create trigger repository_objects_no_update before update on repository_objects
    for each row execute function repository_objects_immutable()`,
  `create table repository_branches (
    project_id integer not null,
    name text not null,
    sha text not null,
    updated_at timestamptz not null,
    primary key (project_id, name)
  )`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table repository_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['repository_stream_versions', 'repository_branches', 'repository_objects']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop function if exists repository_objects_immutable()').execute(db);
}
