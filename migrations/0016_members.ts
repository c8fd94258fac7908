import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The members projection's tables: memberships of groups and projects, and access requests.
const statements = [
  `create table members (
    source_type text not null,
    source_id integer not null,
    user_id integer not null,
    access_level integer not null,
    expires_at date,
    created_by_id integer,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    primary key (source_type, source_id, user_id)
  )`,
  `create index members_user on members (user_id, source_type, source_id)`,
  `create table access_requests (
    source_type text not null,
    source_id integer not null,
    user_id integer not null,
    requested_at timestamptz not null,
    primary key (source_type, source_id, user_id)
  )`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table members_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['members_stream_versions', 'access_requests', 'members']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
