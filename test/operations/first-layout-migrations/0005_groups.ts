import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Groups beyond the 0004 read tables: their custom attributes (a read table of the
// namespaces projection), and the instance keys secrets are derived from (not a read
// table, never in the event log: destroying a key shreds what was derived from it).
const statements = [
  `create table group_custom_attributes (
    group_id integer not null,
    key text not null,
    value text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    primary key (group_id, key)
  )`,
  `create index group_custom_attributes_key_value on group_custom_attributes (key, value)`,
  `create table instance_keys (
    name text primary key,
    secret text not null,
    created_at timestamptz not null default now()
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  // Group runners tokens are derived from this key (src/commands/groups.ts).
  await sql`insert into instance_keys (name, secret) values ('runners_token', ${randomBytes(32).toString('hex')})`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists instance_keys').execute(db);
  await sql.raw('drop table if exists group_custom_attributes').execute(db);
}
