import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The log as one RFC 6962 Merkle tree (docs/log-evidence.md), written by the sealer in the
// transaction of each seal:
// - log_tree_leaves: leaf i of the tree — the event at global_position, in gap-free order —
//   and its leaf hash SHA-256(0x00 ‖ the event's stored 32-byte hash);
// - log_tree_nodes: every complete perfect subtree above the leaves (level ≥ 1, index i
//   covers leaves [i·2^level, (i+1)·2^level)), so any root or proof takes O(log n) rows;
// - log_tree_heads: the signed tree heads published (RFC 6962 §3.5), by tree size.
// Append-only like events and event_seals (0012, 0023): UPDATE, DELETE and TRUNCATE are
// refused with SQLSTATE 55000.
const statements = [
  `create table log_tree_leaves (
    leaf_index bigint primary key,
    global_position bigint not null,
    leaf_hash bytea not null
  )`,
  `create unique index log_tree_leaves_position on log_tree_leaves (global_position)`,
  `create table log_tree_nodes (
    level smallint not null check (level between 1 and 62),
    node_index bigint not null,
    hash bytea not null,
    primary key (level, node_index)
  )`,
  `create table log_tree_heads (
    tree_size bigint primary key,
    timestamp_ms bigint not null,
    root_hash bytea not null,
    signature bytea not null,
    created_at timestamptz not null default now()
  )`,
  `create function log_tree_refuse_change() returns trigger language plpgsql as $$
   begin
     raise exception 'the log tree is append-only: % refused', tg_op using errcode = '55000';
   end $$`,
];

const TABLES = ['log_tree_leaves', 'log_tree_nodes', 'log_tree_heads'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  for (const table of TABLES) {
    await sql.raw(`create trigger ${table}_immutable before update or delete on ${table} for each row execute function log_tree_refuse_change()`).execute(db);
    await sql.raw(`create trigger ${table}_no_truncate before truncate on ${table} for each statement execute function log_tree_refuse_change()`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql.raw(`drop table if exists ${table}`).execute(db);
  await sql.raw('drop function if exists log_tree_refuse_change').execute(db);
}
