import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Idempotent writes (src/http/kernel/idempotency.ts): the first answer to a write sent with an
// `Idempotency-Key`, per caller and key, committed in the request's own transaction. Not a
// projection (the log never holds answers): operational state that expires. `body` is sealed
// under the instance key `idempotency` made here (an answer may carry a new token).
const statements = [
  `create table idempotency_keys (
    scope text not null,
    key text not null,
    request_digest text not null,
    status smallint not null,
    headers jsonb not null,
    body text not null,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    primary key (scope, key)
  )`,
  `create index idempotency_keys_expires_at on idempotency_keys (expires_at)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  await sql`insert into instance_keys (name, secret) values ('idempotency', ${randomBytes(32).toString('hex')}) on conflict (name) do nothing`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists idempotency_keys').execute(db);
  await sql`delete from instance_keys where name = 'idempotency'`.execute(db);
}
