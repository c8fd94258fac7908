import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A project's deletion takes its environments with
 * it, by an absolute condition that a replay finds nothing more to do for.
 */
export const environmentsProjector = defineProjector({
  name: 'environments',
  tables: ['environments'],
  on: {
    EnvironmentCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('environments')
        .values({ id: data.id, project_id: data.project_id, name: data.name, slug: data.slug, external_url: data.external_url, state: 'available', created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    EnvironmentUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('environments')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    EnvironmentStopped: async ({ data, occurredAt }, trx) =>
      trx.updateTable('environments').set({ state: 'stopped', updated_at: occurredAt.toISOString() }).where('id', '=', data.id).execute(),
    EnvironmentDeleted: async ({ data }, trx) => trx.deleteFrom('environments').where('id', '=', data.id).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('environments').where('project_id', '=', data.id).execute(),
  },
});
