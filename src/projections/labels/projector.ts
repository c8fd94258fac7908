import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A project's deletion takes its labels with it,
 * by an absolute condition that a replay finds nothing more to do for.
 */
export const labelsProjector = defineProjector({
  name: 'labels',
  tables: ['labels'],
  on: {
    LabelCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { id, project_id, title, color, description, priority } = data;
      await trx
        .insertInto('labels')
        .values({ id, project_id, title, color, description, priority, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    LabelUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('labels')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    LabelDeleted: async ({ data }, trx) => trx.deleteFrom('labels').where('id', '=', data.id).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('labels').where('project_id', '=', data.id).execute(),
  },
});
