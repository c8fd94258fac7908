import type { Selectable } from 'kysely';
import type { Visibility } from '../../domain/access.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';

/** GitLab's `snippets` row: a personal snippet has no project. */
export interface SnippetsTable {
  id: number;
  project_id: number | null;
  author_id: number;
  title: string;
  file_name: string;
  content: string;
  description: string | null;
  visibility: Visibility;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SnippetsReadTables {
  snippets: SnippetsTable;
  snippets_stream_versions: StreamVersionsTable;
}

export type SnippetRow = Selectable<SnippetsTable>;

declare module '../../database/database.js' {
  interface Database extends SnippetsReadTables {}
}
