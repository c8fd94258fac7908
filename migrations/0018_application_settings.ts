import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The application settings' projection: one row, the attributes the log set over the
// defaults (secrets sealed); and the instance key that seals those secrets, outside the log.
const statements = [
  `create table application_settings (
    id integer primary key check (id = 1),
    attributes jsonb not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table application_settings_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  // AES-256-GCM key of the settings' secrets (src/commands/settings-secrets.ts).
  await sql`insert into instance_keys (name, secret) values ('application_settings', ${randomBytes(32).toString('hex')}) on conflict (name) do nothing`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // The key stays: the log's sealed secrets need it whatever the read tables become.
  for (const table of ['application_settings_stream_versions', 'application_settings']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
