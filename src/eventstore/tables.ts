import type { ColumnType, Generated } from 'kysely';

/** The event log: append-only, one row per event (see DESIGN.md "The event store"). */
export interface EventsTable {
  global_position: ColumnType<string, never, never>;
  transaction_id: ColumnType<string, never, never>;
  stream_id: string;
  stream_version: number;
  event_id: string;
  event_type: string;
  schema_version: number;
  data: ColumnType<unknown, string, never>;
  metadata: ColumnType<EventMetadataRow, string, never>;
  actor_id: number | null;
  project_id: number | null;
  group_id: number | null;
  target_type: string | null;
  target_id: number | null;
  occurred_at: ColumnType<Date, string, never>;
  hash: string;
}

export interface EventMetadataRow {
  actor_id?: number | null;
  actor_username?: string | null;
  sudo_from_id?: number | null;
  /**
   * The request used an impersonation token: the actor is the impersonated user; the admin
   * who created the token is the actor of its PersonalAccessTokenCreated event (token_id).
   */
  impersonation?: boolean;
  token_id?: number | null;
  ip?: string | null;
  /** The request's User-Agent (issues' and snippets' user_agent_detail read it from their creation event). */
  user_agent?: string | null;
  request_id?: string | null;
  correlation_id?: string | null;
  causation_id?: string | null;
}

/** Cross-stream uniqueness (username, email, paths…), written in the append transaction. */
export interface ClaimsTable {
  kind: string;
  key: string;
  stream_id: string;
}

export interface ProjectionCheckpointsTable {
  name: string;
  version: number;
  transaction_id: ColumnType<string, string | undefined, string>;
  global_position: ColumnType<string, string | undefined, string>;
  updated_at: ColumnType<Date, string | undefined, string>;
}

export interface EventSealsTable {
  id: Generated<number>;
  first_transaction_id: string;
  first_position: string;
  last_transaction_id: string;
  last_position: string;
  event_count: number;
  merkle_root: string;
  previous_seal_hash: string;
  seal_hash: string;
  created_at: ColumnType<Date, string, never>;
}

/** Leaf `leaf_index` of the log's Merkle tree (log-tree.ts): the event at `global_position`, SHA-256(0x00 ‖ its stored hash). */
export interface LogTreeLeavesTable {
  leaf_index: string;
  global_position: string;
  leaf_hash: Uint8Array;
}

/** A complete perfect subtree of the log's Merkle tree above the leaves (level ≥ 1). */
export interface LogTreeNodesTable {
  level: number;
  node_index: string;
  hash: Uint8Array;
}

/** A signed tree head as published (RFC 6962 §3.5). */
export interface LogTreeHeadsTable {
  tree_size: string;
  timestamp_ms: string;
  root_hash: Uint8Array;
  signature: Uint8Array;
  created_at: ColumnType<Date, string | undefined, never>;
}

/** Reactors remember which triggering events they handled (idempotency). */
export interface ReactorReceiptsTable {
  reactor: string;
  event_id: string;
}

export interface EventStoreTables {
  events: EventsTable;
  claims: ClaimsTable;
  projection_checkpoints: ProjectionCheckpointsTable;
  event_seals: EventSealsTable;
  reactor_receipts: ReactorReceiptsTable;
  log_tree_leaves: LogTreeLeavesTable;
  log_tree_nodes: LogTreeNodesTable;
  log_tree_heads: LogTreeHeadsTable;
}

declare module '../database/database.js' {
  interface Database extends EventStoreTables {}
}
