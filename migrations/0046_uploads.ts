import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Uploaded files (avatars): content-addressed by SHA-256, append-only, written by the
// commands in the transaction of the event that references them (the event carries the
// hash, size and filename, never the bytes); not a projection, so a rebuild leaves it alone.
const statements = [
  `create table uploads (
    sha256 text primary key check (sha256 ~ '^[0-9a-f]{64}$'),
    size integer not null check (size >= 0),
    content bytea not null,
    check (octet_length(content) = size)
  )`,
  `create function uploads_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'uploads is append-only' using errcode = '55000';
    end
  $$`,
  `create trigger uploads_no_update before update on uploads
    for each row execute function uploads_immutable()`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists uploads').execute(db);
  await sql.raw('drop function if exists uploads_immutable()').execute(db);
}
