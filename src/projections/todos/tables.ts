import type { Selectable } from 'kysely';
import type { TodoAction, TodoTargetType } from '../../domain/todos.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** GitLab's `todos`. */
export interface TodosTable {
  id: number;
  user_id: number;
  author_id: number;
  action: TodoAction;
  target_type: TodoTargetType;
  target_id: number;
  project_id: number | null;
  group_id: number | null;
  state: 'pending' | 'done';
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TodosReadTables {
  todos: TodosTable;
  todos_stream_versions: StreamVersionsTable;
}

export type TodoRow = Selectable<TodosTable>;

declare module '../../database/database.js' {
  interface Database extends TodosReadTables {}
}
