import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The epic issues projection's table: EE's `epic_issues` (an issue in at most one epic, its
// place among the epic's issues), kept from the issues' streams, with the issue's project and
// the epic's group so that their deletions take the link without reading other tables.
const statements = [
  `create sequence epic_issues_id_seq`,
  `create table epic_issues (
    id integer primary key,
    epic_id integer not null,
    epic_group_id integer not null,
    issue_id integer not null unique,
    project_id integer not null,
    relative_position integer,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index epic_issues_epic on epic_issues (epic_id, relative_position, id)`,
  `create index epic_issues_epic_group on epic_issues (epic_group_id)`,
  `create index epic_issues_project on epic_issues (project_id)`,
  `create table epic_issues_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['epic_issues_stream_versions', 'epic_issues']) await sql.raw(`drop table if exists ${table}`).execute(db);
  await sql.raw(`drop sequence if exists epic_issues_id_seq`).execute(db);
}
