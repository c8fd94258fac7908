import type { ColumnType, Selectable } from 'kysely';
import type { Strategy } from '../../domain/feature-flags/rules.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


export interface FeatureFlagsTable {
  id: number;
  project_id: number;
  name: string;
  description: string | null;
  active: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FeatureFlagScopesTable {
  id: number;
  feature_flag_id: number;
  project_id: number;
  environment_scope: string;
  active: boolean;
  strategies: ColumnType<Strategy[], string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FeatureFlagsReadTables {
  feature_flags: FeatureFlagsTable;
  feature_flag_scopes: FeatureFlagScopesTable;
  feature_flags_stream_versions: StreamVersionsTable;
}

export type FeatureFlagRow = Selectable<FeatureFlagsTable>;
export type FeatureFlagScopeRow = Selectable<FeatureFlagScopesTable>;

declare module '../../database/database.js' {
  interface Database extends FeatureFlagsReadTables {}
}
