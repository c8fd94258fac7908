import type { ColumnType, Selectable } from 'kysely';
import type { EpicStatus } from '../../domain/epics.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** GitLab's `epics`; dates are 'YYYY-MM-DD' text, the composite ones kept by the projector. */
export interface EpicsTable {
  id: number;
  group_id: number;
  iid: number;
  parent_id: number | null;
  author_id: number;
  title: string;
  description: string | null;
  labels: string[];
  state: EpicStatus;
  start_date_is_fixed: boolean;
  start_date_fixed: string | null;
  due_date_is_fixed: boolean;
  due_date_fixed: string | null;
  start_date_from_inherited_source: string | null;
  due_date_from_inherited_source: string | null;
  start_date: string | null;
  due_date: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  closed_at: ColumnType<Date | null, string | null, string | null>;
}

/** The last iid each group handed out (GitLab's InternalId for epics). */
export interface EpicIidsTable {
  group_id: number;
  last_iid: number;
}

/** EE's `epic_issues`: the epic an issue is in (one at most) and its place among the epic's issues. */
export interface EpicIssuesTable {
  id: number;
  epic_id: number;
  epic_group_id: number;
  issue_id: number;
  project_id: number;
  relative_position: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EpicsReadTables {
  epics: EpicsTable;
  epic_iids: EpicIidsTable;
  epics_stream_versions: StreamVersionsTable;
  epic_issues: EpicIssuesTable;
  epic_issues_stream_versions: StreamVersionsTable;
}

export type EpicRow = Selectable<EpicsTable>;
export type EpicIssueRow = Selectable<EpicIssuesTable>;

declare module '../../database/database.js' {
  interface Database extends EpicsReadTables {}
}
