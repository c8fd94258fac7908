import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The boards projection's tables: a project's issue boards (GitLab's `boards`, with EE's scope:
// milestone, assignee, labels, weight) and their lists (GitLab's `lists`: the backlog and
// closed lists every board has, and its label lists, ordered by position).
const statements = [
  `create sequence boards_id_seq`,
  `create sequence board_lists_id_seq`,
  `create table boards (
    id integer primary key,
    project_id integer not null,
    name text not null,
    milestone_id integer,
    assignee_id integer,
    label_ids integer[] not null default '{}',
    weight integer,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index boards_project on boards (project_id, id)`,
  `create table board_lists (
    id integer primary key,
    board_id integer not null,
    project_id integer not null,
    list_type text not null,
    label_id integer,
    position integer,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index board_lists_board on board_lists (board_id, position)`,
  `create index board_lists_label on board_lists (label_id) where label_id is not null`,
  `create index board_lists_project on board_lists (project_id)`,
  `create table boards_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['boards_stream_versions', 'board_lists', 'boards']) await sql.raw(`drop table if exists ${table}`).execute(db);
  for (const sequence of ['board_lists_id_seq', 'boards_id_seq']) await sql.raw(`drop sequence if exists ${sequence}`).execute(db);
}
