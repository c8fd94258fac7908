import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Tags: the object store admits annotated tag objects; the repository projection's tags (with
// their releases); the protected tags projection's tables.
const statements = [
  `alter table repository_objects drop constraint repository_objects_type_check`,
  `alter table repository_objects add constraint repository_objects_type_check check (type in ('blob', 'tree', 'commit', 'tag'))`,
  // target: the tag object's SHA (annotated) or the commit's (lightweight); commit_sha: the commit it names.
  `create table repository_tags (
    project_id integer not null,
    name text not null,
    target text not null,
    commit_sha text not null,
    message text,
    release_description text,
    created_at timestamptz not null,
    primary key (project_id, name)
  )`,
  `create sequence protected_tags_id_seq`,
  `create table protected_tags (
    id integer primary key,
    project_id integer not null,
    name text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (project_id, name)
  )`,
  `create table protected_tag_create_access_levels (
    protected_tag_id integer not null,
    position integer not null,
    access_level integer not null,
    primary key (protected_tag_id, position)
  )`,
  `create table protected_tags_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['protected_tags_stream_versions', 'protected_tag_create_access_levels', 'protected_tags', 'repository_tags']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists protected_tags_id_seq').execute(db);
  await sql.raw(`alter table repository_objects drop constraint repository_objects_type_check`).execute(db);
  await sql.raw(`alter table repository_objects add constraint repository_objects_type_check check (type in ('blob', 'tree', 'commit'))`).execute(db);
}
