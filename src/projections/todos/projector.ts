import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import type { EpicEvent } from '../../domain/epics.js';
import { eventTypesOf } from '../../domain/events.js';
import type { GroupEvent } from '../../domain/groups/events.js';
import type { MergeRequestEvent } from '../../domain/merge-requests/events.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import { todoEvents, type TodoEvent } from '../../domain/todos.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type TargetGone =
  | Extract<EpicEvent, { type: 'EpicDeleted' }>
  | Extract<GroupEvent, { type: 'GroupDeleted' }>
  | Extract<MergeRequestEvent, { type: 'MergeRequestDeleted' }>
  | Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: GET /todos reads what POST …/todo wrote. A user's todo events are applied once
 * (todos_stream_versions); a target's deletion takes its todos with it (GitLab's
 * `has_many :todos, dependent: :destroy` on issuables), by an absolute condition.
 */
export const todosProjector: Projector = {
  name: 'todos',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(todoEvents), 'EpicDeleted', 'GroupDeleted', 'MergeRequestDeleted', 'ProjectDeleted'],
  tables: ['todos', 'todos_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (TodoEvent | TargetGone) & ProjectedEvent;
    if (event.type === 'EpicDeleted') {
      await trx.deleteFrom('todos').where('target_type', '=', 'Epic').where('target_id', '=', event.data.id).execute();
      return;
    }
    if (event.type === 'MergeRequestDeleted') {
      await trx.deleteFrom('todos').where('target_type', '=', 'MergeRequest').where('target_id', '=', event.data.id).execute();
      return;
    }
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('todos').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (event.type === 'GroupDeleted') {
      await trx.deleteFrom('todos').where('group_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'todos_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    switch (event.type) {
      case 'TodoCreated': {
        const d = event.data;
        await trx
          .insertInto('todos')
          .values({ ...d, state: 'pending', created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      }
      case 'TodosMarkedDone':
        await trx.updateTable('todos').set({ state: 'done', updated_at: at }).where('id', 'in', event.data.ids).where('user_id', '=', event.data.user_id).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
