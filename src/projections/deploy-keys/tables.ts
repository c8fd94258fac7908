import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** GitLab's keys of type DeployKey. */
export interface DeployKeysTable {
  id: number;
  user_id: number | null;
  title: string;
  key: string;
  fingerprint: string;
  fingerprint_sha256: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The projects a key is enabled in. */
export interface DeployKeysProjectsTable {
  deploy_key_id: number;
  project_id: number;
  can_push: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DeployKeysReadTables {
  deploy_keys: DeployKeysTable;
  deploy_keys_projects: DeployKeysProjectsTable;
  deploy_keys_stream_versions: StreamVersionsTable;
}

export type DeployKeyRow = Selectable<DeployKeysTable>;

declare module '../../database/database.js' {
  interface Database extends DeployKeysReadTables {}
}
