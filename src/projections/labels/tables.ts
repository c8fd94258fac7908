import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** GitLab's `labels` of projects, with the project's `label_priorities` priority of each. */
export interface LabelsTable {
  id: number;
  project_id: number;
  title: string;
  color: string;
  description: string | null;
  priority: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface LabelsReadTables {
  labels: LabelsTable;
  labels_stream_versions: StreamVersionsTable;
}

export type LabelRow = Selectable<LabelsTable>;

declare module '../../database/database.js' {
  interface Database extends LabelsReadTables {}
}
