import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';

/** EE's `issue_links`: a source and a target issue, with their projects. */
export interface IssueLinksTable {
  id: number;
  source_id: number;
  source_project_id: number;
  target_id: number;
  target_project_id: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IssueLinksReadTables {
  issue_links: IssueLinksTable;
  issue_links_stream_versions: StreamVersionsTable;
}

export type IssueLinkRow = Selectable<IssueLinksTable>;

declare module '../../database/database.js' {
  interface Database extends IssueLinksReadTables {}
}
