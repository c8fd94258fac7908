import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Integrations' outbound deliveries: one row per request an integration makes for an event
// (a chat message to several Slack channels makes one per channel, `seq` 0, 1 …). Written by
// the `integration-deliveries` reactor and the sender: operational state like
// reactor_receipts and integration_secrets, not a projection — a rebuild never touches it.
// No secret: the webhook URL is read from integration_secrets when the request is sent.
const statements = [
  `create table integration_deliveries (
    id bigint generated always as identity primary key,
    integration_id integer not null,
    project_id integer not null,
    kind text not null,
    event_id uuid not null,
    event_type text not null,
    flag text not null,
    seq integer not null default 0,
    payload jsonb not null,
    status text not null check (status in ('pending', 'delivered', 'failed', 'recorded')),
    attempts integer not null default 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    response_status integer,
    last_error text,
    created_at timestamptz not null,
    unique (integration_id, event_id, seq)
  )`,
  // What the sender takes: the pending ones that are due, oldest first.
  `create index integration_deliveries_due on integration_deliveries (next_attempt_at, id) where status = 'pending'`,
  `create index integration_deliveries_project on integration_deliveries (project_id, id)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists integration_deliveries').execute(db);
}
