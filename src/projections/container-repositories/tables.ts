import type { ColumnType, Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


export interface ContainerRepositoriesTable {
  id: number;
  project_id: number;
  /** '' for the project's root image. */
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ContainerRepositoryTagsTable {
  repository_id: number;
  project_id: number;
  name: string;
  digest: string;
  revision: string | null;
  /** bigint: read back as a string or a number, depending on the driver. */
  total_size: ColumnType<string | number | null, number | null, number | null>;
  created_at: Timestamp;
}

export interface ContainerRepositoriesReadTables {
  container_repositories: ContainerRepositoriesTable;
  container_repository_tags: ContainerRepositoryTagsTable;
  container_repositories_stream_versions: StreamVersionsTable;
}

export type ContainerRepositoryTagRow = Selectable<ContainerRepositoryTagsTable>;

declare module '../../database/database.js' {
  interface Database extends ContainerRepositoriesReadTables {}
}
