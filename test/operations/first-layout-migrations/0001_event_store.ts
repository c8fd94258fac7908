import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
const statements = [
  `create table events (
    global_position bigint generated always as identity primary key,
    transaction_id xid8 not null default pg_current_xact_id(),
    stream_id text not null,
    stream_version integer not null,
    event_id uuid not null unique,
    event_type text not null,
    schema_version integer not null default 1,
    data jsonb not null,
    metadata jsonb not null,
    actor_id integer,
    project_id integer,
    group_id integer,
    target_type text,
    target_id integer,
    occurred_at timestamptz not null,
    hash text not null,
    constraint events_stream_version_unique unique (stream_id, stream_version)
  )`,
  `create index events_gap_free on events (transaction_id, global_position)`,
  `create index events_actor on events (actor_id, global_position)`,
  `create index events_project on events (project_id, global_position) where project_id is not null`,
  `create index events_group on events (group_id, global_position) where group_id is not null`,
  `create index events_target on events (target_type, target_id)`,
  `create index events_occurred_at on events (occurred_at)`,
  `create function events_refuse_change() returns trigger language plpgsql as $$
   begin
     raise exception 'the event log is append-only: % refused', tg_op using errcode = '55000';
   end $$`,
  `create trigger events_immutable before update or delete on events
     for each row execute function events_refuse_change()`,
  `create trigger events_no_truncate before truncate on events
     for each statement execute function events_refuse_change()`,
  // Per-stream order must survive the gap-free (transaction_id, position) order: an append
  // whose transaction id is lower than the stream head's is retried (DESIGN.md, guarantee 3).
  `create function events_keep_stream_order() returns trigger language plpgsql as $$
   declare head_tx xid8;
   begin
     if new.stream_version > 1 then
       select transaction_id into head_tx from events
        where stream_id = new.stream_id and stream_version = new.stream_version - 1;
       if head_tx is not null and head_tx > new.transaction_id then
         raise exception 'stream % head was written by a later transaction', new.stream_id
           using errcode = '40001';
       end if;
     end if;
     return new;
   end $$`,
  `create trigger events_stream_order before insert on events
     for each row execute function events_keep_stream_order()`,
  `create table claims (
    kind text not null,
    key text not null,
    stream_id text not null,
    primary key (kind, key)
  )`,
  `create table projection_checkpoints (
    name text primary key,
    version integer not null,
    transaction_id xid8 not null default '0',
    global_position bigint not null default 0,
    updated_at timestamptz not null default now()
  )`,
  `create table event_seals (
    id serial primary key,
    first_transaction_id xid8 not null,
    first_position bigint not null,
    last_transaction_id xid8 not null,
    last_position bigint not null,
    event_count integer not null,
    merkle_root text not null,
    previous_seal_hash text not null,
    seal_hash text not null,
    created_at timestamptz not null default now()
  )`,
  `create table reactor_receipts (
    reactor text not null,
    event_id uuid not null,
    primary key (reactor, event_id)
  )`,
  // Integer ids are allocated at command time and carried in creation events.
  `create sequence users_id_seq`,
  `create sequence personal_access_tokens_id_seq`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['reactor_receipts', 'event_seals', 'projection_checkpoints', 'claims', 'events']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop function if exists events_refuse_change, events_keep_stream_order').execute(db);
  await sql.raw('drop sequence if exists users_id_seq, personal_access_tokens_id_seq').execute(db);
}
