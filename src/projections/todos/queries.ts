import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import type { TodoAction, TodoTargetType } from '../../domain/todos.js';

export interface TodoFilters {
  readonly state: 'pending' | 'done';
  readonly action?: TodoAction | undefined;
  readonly authorId?: number | undefined;
  readonly projectId?: number | undefined;
  /** The group and its descendants (TodosFinder#by_group). */
  readonly groupId?: number | undefined;
  readonly type?: TodoTargetType | undefined;
}

/** A todo with its author and its group, as Entities::Todo shows them. */
function todosWithAuthor(db: Db) {
  return db
    .selectFrom('todos')
    .leftJoin('users as a', 'a.id', 'todos.author_id')
    .leftJoin('namespaces as g', 'g.id', 'todos.group_id')
    .selectAll('todos')
    .select([
      'a.name as author_name',
      'a.username as author_username',
      'a.state as author_state',
      'a.avatar_url as author_avatar_url',
      'a.email as author_email',
      'g.name as group_name',
      'g.path as group_path',
      'g.full_path as group_full_path',
      'g.parent_id as group_parent_id',
    ])
    // A todo whose target is gone is not shown (its deletion removes it; this covers a todo marked meanwhile).
    .where(
      sql<SqlBool>`case todos.target_type
        when 'Epic' then exists (select 1 from epics e where e.id = todos.target_id)
        when 'MergeRequest' then exists (select 1 from merge_requests m where m.id = todos.target_id)
        when 'Issue' then exists (select 1 from issues i where i.id = todos.target_id)
        else true end`,
    );
}

export type TodoView = Awaited<ReturnType<ReturnType<typeof todosWithAuthor>['executeTakeFirstOrThrow']>>;

/** GitLab's TodosFinder over the user's own todos: pending unless `done` is asked. */
export function todosQuery(db: Db, userId: number, filters: TodoFilters) {
  let query = todosWithAuthor(db).where('todos.user_id', '=', userId).where('todos.state', '=', filters.state);
  if (filters.action !== undefined) query = query.where('todos.action', '=', filters.action);
  if (filters.authorId !== undefined) query = query.where('todos.author_id', '=', filters.authorId);
  if (filters.projectId !== undefined) query = query.where('todos.project_id', '=', filters.projectId);
  if (filters.groupId !== undefined) {
    const subtree = sql<number>`(select id from namespaces where traversal_ids && array[${filters.groupId}]::integer[])`;
    query = query.where((eb) =>
      eb.or([
        eb('todos.group_id', 'in', subtree),
        eb('todos.project_id', 'in', sql<number>`(select id from projects where traversal_ids && array[${filters.groupId}]::integer[])`),
      ]),
    );
  }
  if (filters.type !== undefined) query = query.where('todos.target_type', '=', filters.type);
  return query;
}

/** `current_user.todos.find(id)`. */
export const findTodo = (db: Db, userId: number, id: number): Promise<TodoView | undefined> =>
  todosWithAuthor(db).where('todos.user_id', '=', userId).where('todos.id', '=', id).executeTakeFirst();
