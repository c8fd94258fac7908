import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The upload each avatar_url serves (migration 0046's uploads, by SHA-256), projected from
// the avatar events next to avatar_url: the avatar route reads the row it authorizes by,
// never the log. Never shown by the API. Nullable, no default: adding it rewrites nothing.
const TABLES = ['users', 'namespaces', 'projects'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql.raw(`alter table ${table} add column avatar_sha256 text`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql.raw(`alter table ${table} drop column if exists avatar_sha256`).execute(db);
}
