import type { Selectable } from 'kysely';
import type { AccessKind } from '../../domain/protected-branches.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


export interface ProtectedBranchesTable {
  id: number;
  project_id: number;
  name: string;
  code_owner_approval_required: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The rules of a protected branch, per kind in the order they were given. */
export interface ProtectedBranchAccessLevelsTable {
  protected_branch_id: number;
  kind: AccessKind;
  position: number;
  access_level: number;
  user_id: number | null;
  group_id: number | null;
}

export interface ProtectedBranchesReadTables {
  protected_branches: ProtectedBranchesTable;
  protected_branch_access_levels: ProtectedBranchAccessLevelsTable;
  protected_branches_stream_versions: StreamVersionsTable;
}

export type ProtectedBranchRow = Selectable<ProtectedBranchesTable>;

declare module '../../database/database.js' {
  interface Database extends ProtectedBranchesReadTables {}
}
