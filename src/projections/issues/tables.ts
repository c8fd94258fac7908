import type { Selectable } from 'kysely';
import type { IssueStatus } from '../../domain/issues/decider.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { NullableTimestamp, Timestamp } from '../../database/columns.js';

/** GitLab's `issues`, with its closer, its move and its time tracking totals on the row. */
export interface IssuesTable {
  id: number;
  project_id: number;
  iid: number;
  author_id: number;
  title: string;
  description: string | null;
  state: IssueStatus;
  /** In GitLab's order (the first is `assignee`). */
  assignee_ids: number[];
  label_ids: number[];
  milestone_id: number | null;
  due_date: string | null;
  confidential: boolean;
  discussion_locked: boolean | null;
  weight: number | null;
  relative_position: number | null;
  moved_to_id: number | null;
  moved_from_id: number | null;
  closed_by_id: number | null;
  closed_at: NullableTimestamp;
  time_estimate: number;
  total_time_spent: number;
  /** Always 0 and read by nothing: the views read `note_counts` and `award_emoji` (kept to spare a migration). */
  user_notes_count: number;
  upvotes: number;
  downvotes: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Explicit subscriptions (GitLab's `subscriptions`); implicit ones (author, assignees) are not rows. */
export interface IssueSubscriptionsTable {
  issue_id: number;
  user_id: number;
  subscribed: boolean;
}

/** The last iid each project handed out (GitLab's InternalId for issues). */
export interface IssueIidsTable {
  project_id: number;
  last_iid: number;
}

export interface IssuesReadTables {
  issues: IssuesTable;
  issue_subscriptions: IssueSubscriptionsTable;
  issue_iids: IssueIidsTable;
  issues_stream_versions: StreamVersionsTable;
}

export type IssueRow = Selectable<IssuesTable>;

declare module '../../database/database.js' {
  interface Database extends IssuesReadTables {}
}
