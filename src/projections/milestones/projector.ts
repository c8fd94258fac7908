import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A project's deletion takes its milestones with it
 * (not its milestone_iids row), by an absolute condition that a replay finds nothing more to
 * do for.
 */
export const milestonesProjector = defineProjector({
  name: 'milestones',
  tables: ['milestones', 'milestone_iids'],
  on: {
    MilestoneCreated: async ({ data: d, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('milestones')
        .values({ id: d.id, project_id: d.project_id, iid: d.iid, title: d.title, description: d.description, state: 'active', start_date: d.start_date, due_date: d.due_date, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await trx
        .insertInto('milestone_iids')
        .values({ project_id: d.project_id, last_iid: d.iid })
        .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ last_iid: eb.fn('greatest', [eb.ref('milestone_iids.last_iid'), eb.ref('excluded.last_iid')]) })))
        .execute();
    },
    MilestoneUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('milestones')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    MilestoneClosed: async ({ data, occurredAt }, trx) =>
      trx.updateTable('milestones').set({ state: 'closed', updated_at: occurredAt.toISOString() }).where('id', '=', data.id).execute(),
    MilestoneReopened: async ({ data, occurredAt }, trx) =>
      trx.updateTable('milestones').set({ state: 'active', updated_at: occurredAt.toISOString() }).where('id', '=', data.id).execute(),
    MilestoneDeleted: async ({ data }, trx) => trx.deleteFrom('milestones').where('id', '=', data.id).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('milestones').where('project_id', '=', data.id).execute(),
  },
});
