import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The notes projection's tables: user notes (system notes are not stored: they are derived from
// the noteable's events when read), each noteable's count of user notes, and the award emoji
// projection's awards. Note ids are bigint: a note's id lives in the log's position space
// (10 · position), see src/domain/notes/system-notes.ts.
const statements = [
  `create table notes (
    id bigint primary key,
    noteable_type text not null,
    noteable_id integer,
    commit_id text,
    project_id integer,
    group_id integer,
    author_id integer not null,
    body text not null,
    type text,
    discussion_id text not null,
    position jsonb,
    line_code text,
    resolvable boolean not null,
    resolved_by_id integer,
    resolved_at timestamptz,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index notes_noteable on notes (noteable_type, noteable_id, id)`,
  `create index notes_commit on notes (project_id, commit_id, id) where commit_id is not null`,
  `create index notes_discussion on notes (discussion_id)`,
  `create index notes_group on notes (group_id) where group_id is not null`,
  `create table note_counts (
    noteable_type text not null,
    noteable_id integer not null,
    user_notes_count integer not null,
    primary key (noteable_type, noteable_id)
  )`,
  `create table notes_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
  `create sequence award_emoji_id_seq`,
  `create table award_emoji (
    id integer primary key,
    name text not null,
    user_id integer not null,
    awardable_type text not null,
    awardable_id bigint not null,
    project_id integer,
    group_id integer,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index award_emoji_awardable on award_emoji (awardable_type, awardable_id, id)`,
  `create index award_emoji_project on award_emoji (project_id) where project_id is not null`,
  `create table award_emoji_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
