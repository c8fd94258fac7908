import type { Selectable } from 'kysely';
import type { MemberSourceType } from '../../domain/access.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** Direct memberships of groups (source_type 'Namespace') and projects ('Project'). */
export interface MembersTable {
  source_type: MemberSourceType;
  source_id: number;
  user_id: number;
  access_level: number;
  expires_at: string | null;
  created_by_id: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccessRequestsTable {
  source_type: MemberSourceType;
  source_id: number;
  user_id: number;
  requested_at: Timestamp;
}

export interface MembersReadTables {
  members: MembersTable;
  access_requests: AccessRequestsTable;
  members_stream_versions: StreamVersionsTable;
}

export type MemberRow = Selectable<MembersTable>;
export type AccessRequestRow = Selectable<AccessRequestsTable>;

declare module '../../database/database.js' {
  interface Database extends MembersReadTables {}
}
