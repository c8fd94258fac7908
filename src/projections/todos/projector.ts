import { sql } from 'kysely';
import type { TodoTargetType } from '../../domain/todos.js';
import { defineProjector } from '../projector.js';

const TARGET_TABLES: Record<TodoTargetType, string> = { Issue: 'issues', MergeRequest: 'merge_requests', Epic: 'epics' };

/**
 * Inline: GET /todos reads what POST …/todo wrote. A target's deletion takes its todos with
 * it (GitLab's `has_many :todos, dependent: :destroy` on issuables), by an absolute condition.
 *
 * A todo whose target is gone when it arrives is not kept: the todos reactor may append one
 * after the merge request it names was deleted, in a transaction whose id is lower than the
 * deletion's. The inline path then saw the deletion first and the todo after, a replay in
 * gap-free order the todo first and the deletion after; reading the target's row makes both
 * end without it. The targets' projectors come first in the registry, so a batch holding the
 * target's creation and its todo finds the row.
 */
export const todosProjector = defineProjector({
  name: 'todos',
  // 2: a todo whose target was gone when it arrived is not kept (rebuilt without them).
  version: 2,
  tables: ['todos'],
  reads: Object.values(TARGET_TABLES),
  on: {
    TodoCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await sql`insert into todos (id, user_id, author_id, action, target_type, target_id, project_id, group_id, state, created_at, updated_at)
        select ${data.id}, ${data.user_id}, ${data.author_id}, ${data.action}, ${data.target_type}, ${data.target_id}, ${data.project_id}, ${data.group_id}, 'pending', ${at}, ${at}
         where exists (select 1 from ${sql.table(TARGET_TABLES[data.target_type])} where id = ${data.target_id})
        on conflict (id) do nothing`.execute(trx);
    },
    TodosMarkedDone: async ({ data, occurredAt }, trx) =>
      trx.updateTable('todos').set({ state: 'done', updated_at: occurredAt.toISOString() }).where('id', 'in', data.ids).where('user_id', '=', data.user_id).execute(),
  },
  cascades: {
    EpicDeleted: async ({ data }, trx) => trx.deleteFrom('todos').where('target_type', '=', 'Epic').where('target_id', '=', data.id).execute(),
    MergeRequestDeleted: async ({ data }, trx) => trx.deleteFrom('todos').where('target_type', '=', 'MergeRequest').where('target_id', '=', data.id).execute(),
    IssueDeleted: async ({ data }, trx) => trx.deleteFrom('todos').where('target_type', '=', 'Issue').where('target_id', '=', data.id).execute(),
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('todos').where('project_id', '=', data.id).execute(),
    GroupDeleted: async ({ data }, trx) => trx.deleteFrom('todos').where('group_id', '=', data.id).execute(),
  },
});
