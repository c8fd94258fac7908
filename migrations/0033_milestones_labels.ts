import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The milestones projection's tables (project milestones, each project's last milestone iid)
// and the labels projection's (project labels). Dates are 'YYYY-MM-DD' text: plain days,
// compared as text, never shifted by a time zone.
const statements = [
  `create sequence milestones_id_seq`,
  `create table milestones (
    id integer primary key,
    project_id integer not null,
    iid integer not null,
    title text not null,
    description text,
    state text not null,
    start_date text,
    due_date text,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (project_id, iid)
  )`,
  `create index milestones_project_title on milestones (project_id, title)`,
  // The last iid each project handed out: GitLab's InternalId, never reused after a deletion.
  `create table milestone_iids (project_id integer primary key, last_iid integer not null)`,
  `create table milestones_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
  `create sequence labels_id_seq`,
  `create table labels (
    id integer primary key,
    project_id integer not null,
    title text not null,
    color text not null,
    description text,
    priority integer,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index labels_project_title on labels (project_id, title)`,
  `create table labels_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['labels_stream_versions', 'labels', 'milestones_stream_versions', 'milestone_iids', 'milestones']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  for (const sequence of ['labels_id_seq', 'milestones_id_seq']) await sql.raw(`drop sequence if exists ${sequence}`).execute(db);
}
