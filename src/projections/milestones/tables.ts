import type { Selectable } from 'kysely';
import type { MilestoneStatus } from '../../domain/milestones.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** GitLab's `milestones` of projects; dates are 'YYYY-MM-DD' text. */
export interface MilestonesTable {
  id: number;
  project_id: number;
  iid: number;
  title: string;
  description: string | null;
  state: MilestoneStatus;
  start_date: string | null;
  due_date: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The last iid each project handed out (GitLab's InternalId for milestones). */
export interface MilestoneIidsTable {
  project_id: number;
  last_iid: number;
}

export interface MilestonesReadTables {
  milestones: MilestonesTable;
  milestone_iids: MilestoneIidsTable;
  milestones_stream_versions: StreamVersionsTable;
}

export type MilestoneRow = Selectable<MilestonesTable>;

declare module '../../database/database.js' {
  interface Database extends MilestonesReadTables {}
}
