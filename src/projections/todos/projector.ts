import { defineProjector } from '../projector.js';

/**
 * Inline: GET /todos reads what POST …/todo wrote. A target's deletion takes its todos with
 * it (GitLab's `has_many :todos, dependent: :destroy` on issuables), by an absolute condition.
 */
export const todosProjector = defineProjector({
  name: 'todos',
  tables: ['todos'],
  on: {
    TodoCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('todos')
        .values({ ...data, state: 'pending', created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
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
