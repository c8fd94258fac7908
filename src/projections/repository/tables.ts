import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** A project's branches and their heads (the repository projection). */
export interface RepositoryBranchesTable {
  project_id: number;
  name: string;
  sha: string;
  updated_at: Timestamp;
}

/**
 * Git objects, content-addressed per project, append-only: written by the repository
 * commands in their own transaction (src/commands/repository.ts), never by a projection, so
 * a rebuild leaves them alone.
 */
export interface RepositoryObjectsTable {
  project_id: number;
  sha: string;
  type: 'blob' | 'tree' | 'commit';
  size: number;
  content: Uint8Array;
}

export interface RepositoryReadTables {
  repository_branches: RepositoryBranchesTable;
  repository_objects: RepositoryObjectsTable;
  repository_stream_versions: StreamVersionsTable;
}

export type RepositoryBranchRow = Selectable<RepositoryBranchesTable>;

declare module '../../database/database.js' {
  interface Database extends RepositoryReadTables {}
}
