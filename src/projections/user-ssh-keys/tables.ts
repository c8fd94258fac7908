import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';

/** GitLab's keys of type nil: a user's SSH keys. */
export interface UserSshKeysTable {
  id: number;
  user_id: number;
  title: string;
  key: string;
  fingerprint: string;
  fingerprint_sha256: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UserSshKeysReadTables {
  user_ssh_keys: UserSshKeysTable;
  user_ssh_keys_stream_versions: StreamVersionsTable;
}

export type UserSshKeyRow = Selectable<UserSshKeysTable>;

declare module '../../database/database.js' {
  interface Database extends UserSshKeysReadTables {}
}
