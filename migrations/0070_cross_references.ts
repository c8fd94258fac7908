import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The cross-references projection's table: who mentioned an issue or a merge request (GitLab's
// "mentioned in …" system notes, action `cross_reference`), or linked an issue to another (EE's
// `relate` / `unrelate` notes), or put an issue in an epic or took it out (EE's epic notes, on the
// epic: `other_epic_id` the epic of a move's other end), one row per source event, mentioner and
// target; the note's id, author and time are its source event's, read from `events` by `event_id`.
const statements = [
  `create table cross_references (
    event_id uuid not null,
    target_type text not null,
    target_id integer not null,
    ordinal integer not null,
    action text not null,
    target_project_id integer,
    mentioner_type text not null,
    mentioner_id integer,
    mentioner_sha text,
    mentioner_project_id integer not null,
    other_epic_id integer,
    primary key (target_type, target_id, event_id, ordinal)
  )`,
  `create index cross_references_mentioner on cross_references (mentioner_type, mentioner_id)`,
  `create index cross_references_target_project on cross_references (target_project_id)`,
  `create index cross_references_mentioner_project on cross_references (mentioner_project_id)`,
  `create table cross_references_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['cross_references_stream_versions', 'cross_references']) await sql.raw(`drop table if exists ${table}`).execute(db);
}
