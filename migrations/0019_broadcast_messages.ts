import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The broadcast_messages projection's tables: the messages administrators broadcast.
const statements = [
  `create sequence broadcast_messages_id_seq`,
  `create table broadcast_messages (
    id integer primary key,
    message text not null,
    starts_at timestamptz not null,
    ends_at timestamptz not null,
    color text,
    font text,
    target_path text,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table broadcast_messages_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of ['drop table if exists broadcast_messages_stream_versions', 'drop table if exists broadcast_messages', 'drop sequence if exists broadcast_messages_id_seq']) {
    await sql.raw(statement).execute(db);
  }
}
