import { z } from 'zod';
import { type Decider, unhandled } from './decider.js';
import { notModified } from './errors.js';
import type { EventOf, EventSchemas } from './events.js';
import { defineAggregate } from './aggregate.js';

/**
 * A user's todos (GitLab's `Todo`): one aggregate per user, stream `todos-<user id>`, so
 * "at most one pending todo of an action on a target by an author" is decided on one stream.
 * Epics and merge requests are marked by hand (POST …/todo); merge requests also get them from
 * the todos reactor (src/commands/merge-request-todos.ts): assignments, mentions, a merge
 * request that cannot be merged.
 */

// ───────────────────────────── Events ─────────────────────────────

/** Todo::ACTION_NAMES (GitLab 12), by name: the stored value and the `action` filter. */
export const TODO_ACTIONS = ['assigned', 'mentioned', 'build_failed', 'marked', 'approval_required', 'unmergeable', 'directly_addressed'] as const;
export type TodoAction = (typeof TODO_ACTIONS)[number];

/** TodosFinder#type? (GitLab 12 EE): the target types a todo can have. */
export const TODO_TARGET_TYPES = ['Issue', 'MergeRequest', 'Epic'] as const;
export type TodoTargetType = (typeof TODO_TARGET_TYPES)[number];

export const todoEvents = {
  TodoCreated: z.strictObject({
    id: z.int(),
    user_id: z.int(),
    author_id: z.int(),
    action: z.enum(TODO_ACTIONS),
    target_type: z.enum(TODO_TARGET_TYPES),
    target_id: z.int(),
    /** An epic's todo has its group and no project; a merge request's the reverse. */
    project_id: z.int().nullable(),
    group_id: z.int().nullable(),
  }),
  /** One todo or many (POST /todos/mark_as_done) marked done at once. */
  TodosMarkedDone: z.strictObject({ user_id: z.int(), ids: z.array(z.int()) }),
} satisfies EventSchemas;

export type TodoEvent = EventOf<typeof todoEvents>;

export const todoStreamId = (userId: number) => `todos-${userId}`;

// ───────────────────────────── State ─────────────────────────────

export interface TodoRecord {
  readonly authorId: number;
  readonly action: TodoAction;
  readonly targetType: TodoTargetType;
  readonly targetId: number;
  readonly state: 'pending' | 'done';
}

export interface TodoListState {
  readonly userId: number;
  readonly todos: ReadonlyMap<number, TodoRecord>;
}

// ───────────────────────────── Commands ─────────────────────────────

export type TodoCommand =
  | {
      readonly type: 'MarkTodo';
      readonly id: number;
      readonly authorId: number;
      readonly targetType: TodoTargetType;
      readonly targetId: number;
      readonly projectId: number | null;
      readonly groupId: number | null;
    }
  /** TodoService#create_todos: one todo of `action`, unless the same one is pending (then nothing). */
  | {
      readonly type: 'AddTodo';
      readonly id: number;
      readonly authorId: number;
      readonly action: Exclude<TodoAction, 'marked'>;
      readonly targetType: TodoTargetType;
      readonly targetId: number;
      readonly projectId: number | null;
      readonly groupId: number | null;
    }
  /** Todo#done! of the pending ones among `ids` (a user's, or TodoService#mark_pending_todos_as_done's: issuable-todos.ts). */
  | { readonly type: 'MarkTodosDone'; readonly ids: readonly number[] };

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: TodoListState, event: TodoEvent): TodoListState {
  switch (event.type) {
    case 'TodoCreated': {
      const d = event.data;
      const todos = new Map(state.todos);
      todos.set(d.id, { authorId: d.author_id, action: d.action, targetType: d.target_type, targetId: d.target_id, state: 'pending' });
      return { ...state, todos };
    }
    case 'TodosMarkedDone': {
      const todos = new Map(state.todos);
      for (const id of event.data.ids) {
        const todo = todos.get(id);
        if (todo) todos.set(id, { ...todo, state: 'done' });
      }
      return { ...state, todos };
    }
    default:
      return unhandled(event);
  }
}

/** TodoService#create_todos skips a user with the same pending todo (`pending_todos(user, attributes).exists?`). */
function pendingLike(todos: TodoListState['todos'], action: TodoAction, authorId: number, targetType: TodoTargetType, targetId: number): boolean {
  for (const todo of todos.values()) {
    if (todo.state === 'pending' && todo.action === action && todo.authorId === authorId && todo.targetType === targetType && todo.targetId === targetId) return true;
  }
  return false;
}

function decide(command: TodoCommand, state: TodoListState): TodoEvent[] {
  const { userId, todos } = state;
  switch (command.type) {
    case 'MarkTodo':
    case 'AddTodo': {
      const action = command.type === 'MarkTodo' ? 'marked' : command.action;
      if (pendingLike(todos, action, command.authorId, command.targetType, command.targetId)) {
        // TodoService#mark_todo: GitLab's 304 for a marked one; the others are simply not made twice.
        if (command.type === 'MarkTodo') throw notModified();
        return [];
      }
      return [
        {
          type: 'TodoCreated',
          data: {
            id: command.id,
            user_id: userId,
            author_id: command.authorId,
            action,
            target_type: command.targetType,
            target_id: command.targetId,
            project_id: command.projectId,
            group_id: command.groupId,
          },
        },
      ];
    }
    case 'MarkTodosDone': {
      // Todo#done! on pending ones only; done ones stay as they are.
      const ids = [...new Set(command.ids)].filter((id) => todos.get(id)?.state === 'pending').sort((a, b) => a - b);
      return ids.length === 0 ? [] : [{ type: 'TodosMarkedDone', data: { user_id: userId, ids } }];
    }
    default:
      return unhandled(command);
  }
}

export const todoDecider: Decider<TodoCommand, TodoEvent, TodoListState, number> = {
  initialState: (userId) => ({ userId, todos: new Map() }),
  evolve,
  decide,
};

// ───────────────────────────── The aggregate ─────────────────────────────

/** A user's todos (src/domain/todos.ts): keyed by the user's id. */
export const todos = defineAggregate({
  name: 'todos',
  streamId: todoStreamId,
  events: todoEvents,
  decider: todoDecider,
  idSequence: 'todos_id_seq',
});
