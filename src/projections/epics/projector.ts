import type { Db } from '../../database/database.js';
import { compositeDates, inheritedDates } from '../../domain/epics.js';
import { defineProjector } from '../projector.js';

/**
 * Epics::UpdateDatesService: an epic's inherited dates come from its children's composite
 * dates, so a change to one epic's dates runs up its ancestors. Absolute: each epic is
 * recomputed from the rows as they are, so a replay recomputes the same values.
 */
async function refreshDates(trx: Db, startId: number | null): Promise<void> {
  let id = startId;
  for (let depth = 0; id !== null && depth < 32; depth++) {
    const epic = await trx
      .selectFrom('epics')
      .select(['id', 'parent_id', 'start_date_is_fixed', 'start_date_fixed', 'due_date_is_fixed', 'due_date_fixed', 'start_date', 'due_date'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!epic) return;
    const children = await trx.selectFrom('epics').select(['start_date as startDate', 'due_date as dueDate']).where('parent_id', '=', id).execute();
    const inherited = inheritedDates(children);
    const composite = compositeDates(
      { startDateIsFixed: epic.start_date_is_fixed, startDateFixed: epic.start_date_fixed, dueDateIsFixed: epic.due_date_is_fixed, dueDateFixed: epic.due_date_fixed },
      inherited,
    );
    await trx
      .updateTable('epics')
      .set({ start_date_from_inherited_source: inherited.startDate, due_date_from_inherited_source: inherited.dueDate, start_date: composite.startDate, due_date: composite.dueDate })
      .where('id', '=', id)
      .execute();
    // The parent's inherited dates read this epic's composite ones: unchanged, nothing above moves.
    if (composite.startDate === epic.start_date && composite.dueDate === epic.due_date) return;
    id = epic.parent_id;
  }
}

/** Inline: the API reads what it just wrote. A group's deletion takes its epics with it. */
export const epicsProjector = defineProjector({
  name: 'epics',
  tables: ['epics', 'epic_iids'],
  on: {
    EpicCreated: async ({ data: d, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('epics')
        .values({
          id: d.id,
          group_id: d.group_id,
          iid: d.iid,
          parent_id: d.parent_id,
          author_id: d.author_id,
          title: d.title,
          description: d.description,
          labels: d.labels,
          state: 'opened',
          start_date_is_fixed: d.start_date_is_fixed,
          start_date_fixed: d.start_date_fixed,
          due_date_is_fixed: d.due_date_is_fixed,
          due_date_fixed: d.due_date_fixed,
          start_date_from_inherited_source: null,
          due_date_from_inherited_source: null,
          start_date: null,
          due_date: null,
          created_at: at,
          updated_at: at,
          closed_at: null,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await trx
        .insertInto('epic_iids')
        .values({ group_id: d.group_id, last_iid: d.iid })
        .onConflict((oc) => oc.column('group_id').doUpdateSet((eb) => ({ last_iid: eb.fn('greatest', [eb.ref('epic_iids.last_iid'), eb.ref('excluded.last_iid')]) })))
        .execute();
      await refreshDates(trx, d.id);
    },
    EpicUpdated: async ({ data, occurredAt }, trx) => {
      await trx
        .updateTable('epics')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute();
      await refreshDates(trx, data.id);
    },
    EpicClosed: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx.updateTable('epics').set({ state: 'closed', closed_at: at, updated_at: at }).where('id', '=', data.id).execute();
    },
    EpicReopened: async ({ data, occurredAt }, trx) =>
      trx.updateTable('epics').set({ state: 'opened', closed_at: null, updated_at: occurredAt.toISOString() }).where('id', '=', data.id).execute(),
    EpicDeleted: async ({ data }, trx) => {
      const row = await trx.deleteFrom('epics').where('id', '=', data.id).returning('parent_id').executeTakeFirst();
      if (row) await refreshDates(trx, row.parent_id);
    },
  },
  cascades: {
    GroupDeleted: async ({ data }, trx) => trx.deleteFrom('epics').where('group_id', '=', data.id).execute(),
  },
});
