import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The notification_settings projection's tables: each user's global setting (source_type and
// source_id null) and their settings for groups ('Namespace') and projects ('Project').
const statements = [
  `create table notification_settings (
    user_id integer not null,
    source_type text,
    source_id integer,
    level text not null,
    events jsonb not null default '{}',
    check ((source_type is null) = (source_id is null))
  )`,
  `create unique index notification_settings_key on notification_settings (user_id, coalesce(source_type, ''), coalesce(source_id, 0))`,
  `create index notification_settings_source on notification_settings (source_type, source_id)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table notification_settings_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['notification_settings_stream_versions', 'notification_settings']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
