import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';

export interface ProtectedTagsTable {
  id: number;
  project_id: number;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The roles that may create a protected tag, in the order they were given. */
export interface ProtectedTagCreateAccessLevelsTable {
  protected_tag_id: number;
  position: number;
  access_level: number;
}

export interface ProtectedTagsReadTables {
  protected_tags: ProtectedTagsTable;
  protected_tag_create_access_levels: ProtectedTagCreateAccessLevelsTable;
  protected_tags_stream_versions: StreamVersionsTable;
}

export type ProtectedTagRow = Selectable<ProtectedTagsTable>;

declare module '../../database/database.js' {
  interface Database extends ProtectedTagsReadTables {}
}
