import type { ColumnType, Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


export interface GeoNodesTable {
  id: number;
  name: string;
  url: string;
  internal_url: string | null;
  primary: boolean;
  enabled: boolean;
  files_max_capacity: number;
  repos_max_capacity: number;
  verification_max_capacity: number;
  container_repositories_max_capacity: number;
  sync_object_storage: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** On the primary: the last status a secondary posted (not a projection: see queries.ts). */
export interface GeoNodeStatusesTable {
  geo_node_id: number;
  status: ColumnType<Record<string, unknown>, string, string>;
  received_at: Timestamp;
}

/** On a secondary: its one row of replication progress (positions are the primary's). */
export interface GeoReplicationCursorTable {
  id: number;
  transaction_id: string;
  global_position: ColumnType<string, string, string>;
  last_event_id: ColumnType<string | null, string | null, string | null>;
  last_event_at: ColumnType<Date | null, string | null, string | null>;
  primary_last_event_id: ColumnType<string | null, string | null, string | null>;
  primary_last_event_at: ColumnType<Date | null, string | null, string | null>;
  polled_at: ColumnType<Date | null, string | null, string | null>;
  poll_error: string | null;
}

/** On a secondary: an event of the primary it could not apply. */
export interface GeoEventFailuresTable {
  global_position: ColumnType<string, string, string>;
  stream_id: string;
  event_type: string;
  project_id: number | null;
  failure_type: 'sync' | 'verification';
  checksum_mismatch: boolean;
  event_hash: string;
  message: string;
  retry_count: number;
  first_failed_at: Timestamp;
  last_failed_at: Timestamp;
}

export interface GeoNodesReadTables {
  geo_nodes: GeoNodesTable;
  geo_nodes_stream_versions: StreamVersionsTable;
  geo_node_statuses: GeoNodeStatusesTable;
  geo_replication_cursor: GeoReplicationCursorTable;
  geo_event_failures: GeoEventFailuresTable;
}

export type GeoNodeRow = Selectable<GeoNodesTable>;
export type GeoEventFailureRow = Selectable<GeoEventFailuresTable>;
export type GeoReplicationCursorRow = Selectable<GeoReplicationCursorTable>;

declare module '../../database/database.js' {
  interface Database extends GeoNodesReadTables {}
}
