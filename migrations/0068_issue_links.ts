import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The issue links projection's table: EE's `issue_links` (a source and a target issue, each
// with its project so that a project's deletion takes its links).
const statements = [
  `create sequence issue_links_id_seq`,
  `create table issue_links (
    id integer primary key,
    source_id integer not null,
    source_project_id integer not null,
    target_id integer not null,
    target_project_id integer not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index issue_links_source on issue_links (source_id)`,
  `create index issue_links_target on issue_links (target_id)`,
  `create index issue_links_source_project on issue_links (source_project_id)`,
  `create index issue_links_target_project on issue_links (target_project_id)`,
  `create table issue_links_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['issue_links_stream_versions', 'issue_links']) await sql.raw(`drop table if exists ${table}`).execute(db);
  await sql.raw(`drop sequence if exists issue_links_id_seq`).execute(db);
}
