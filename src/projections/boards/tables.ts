import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';

/** GitLab's `boards` of projects, with EE's scope (board_assignees, board_labels folded in). */
export interface BoardsTable {
  id: number;
  project_id: number;
  name: string;
  milestone_id: number | null;
  assignee_id: number | null;
  label_ids: number[];
  weight: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** GitLab's `lists`: `backlog` and `closed` (no position, never shown by the API) and `label` lists. */
export interface BoardListsTable {
  id: number;
  board_id: number;
  project_id: number;
  list_type: 'backlog' | 'label' | 'closed';
  label_id: number | null;
  position: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface BoardsReadTables {
  boards: BoardsTable;
  board_lists: BoardListsTable;
  boards_stream_versions: StreamVersionsTable;
}

export type BoardRow = Selectable<BoardsTable>;
export type BoardListRow = Selectable<BoardListsTable>;

declare module '../../database/database.js' {
  interface Database extends BoardsReadTables {}
}
