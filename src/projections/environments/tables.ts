import type { Selectable } from 'kysely';
import type { EnvironmentStatus } from '../../domain/environments.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


export interface EnvironmentsTable {
  id: number;
  project_id: number;
  name: string;
  slug: string;
  external_url: string | null;
  state: EnvironmentStatus;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EnvironmentsReadTables {
  environments: EnvironmentsTable;
  environments_stream_versions: StreamVersionsTable;
}

export type EnvironmentRow = Selectable<EnvironmentsTable>;

declare module '../../database/database.js' {
  interface Database extends EnvironmentsReadTables {}
}
