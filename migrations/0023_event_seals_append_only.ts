import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The seal chain is append-only like the events table (0012_kernel): UPDATE, DELETE and
// TRUNCATE of event_seals are refused with SQLSTATE 55000, so removing or rewriting a seal
// takes the same privileged step (disabling the trigger as the table's owner) as editing an
// event. The one sanctioned rewrite, `forgelog events rebase` (src/eventstore/rebase.ts),
// disables it inside its own transaction.
const statements = [
  `create function event_seals_refuse_change() returns trigger language plpgsql as $$
   begin
     raise exception 'the seal chain is append-only: % refused', tg_op using errcode = '55000';
   end $$`,
  `create trigger event_seals_immutable before update or delete on event_seals
     for each row execute function event_seals_refuse_change()`,
  `create trigger event_seals_no_truncate before truncate on event_seals
     for each statement execute function event_seals_refuse_change()`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop trigger if exists event_seals_no_truncate on event_seals').execute(db);
  await sql.raw('drop trigger if exists event_seals_immutable on event_seals').execute(db);
  await sql.raw('drop function if exists event_seals_refuse_change').execute(db);
}
