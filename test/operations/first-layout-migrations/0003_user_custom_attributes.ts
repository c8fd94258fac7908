import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// GitLab's user_custom_attributes: admin-only key/value pairs on a user, one value per key.
const statements = [
  `create table user_custom_attributes (
    user_id integer not null,
    key text not null,
    value text not null,
    created_version integer not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    stream_version integer not null,
    primary key (user_id, key)
  )`,
  // GET /users?custom_attributes[key]=value
  `create index user_custom_attributes_key_value on user_custom_attributes (key, value)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists user_custom_attributes').execute(db);
}
