import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


export interface BroadcastMessagesTable {
  id: number;
  message: string;
  starts_at: Timestamp;
  ends_at: Timestamp;
  color: string | null;
  font: string | null;
  target_path: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface BroadcastMessagesReadTables {
  broadcast_messages: BroadcastMessagesTable;
  broadcast_messages_stream_versions: StreamVersionsTable;
}

export type BroadcastMessageRow = Selectable<BroadcastMessagesTable>;

declare module '../../database/database.js' {
  interface Database extends BroadcastMessagesReadTables {}
}
