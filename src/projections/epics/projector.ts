import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { compositeDates, epicEvents, inheritedDates, type EpicEvent } from '../../domain/epics.js';
import { eventTypesOf } from '../../domain/events.js';
import type { GroupEvent } from '../../domain/groups/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type GroupDeleted = Extract<GroupEvent, { type: 'GroupDeleted' }>;

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

/**
 * Inline: the API reads what it just wrote. An epic's own events are applied once
 * (epics_stream_versions); a group's deletion takes its epics with it.
 */
export const epicsProjector: Projector = {
  name: 'epics',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(epicEvents), 'GroupDeleted'],
  tables: ['epics', 'epic_iids', 'epics_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (EpicEvent | GroupDeleted) & ProjectedEvent;
    if (event.type === 'GroupDeleted') {
      await trx.deleteFrom('epics').where('group_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'epics_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id } = event.data;
    switch (event.type) {
      case 'EpicCreated': {
        const d = event.data;
        await trx
          .insertInto('epics')
          .values({
            id,
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
        await refreshDates(trx, id);
        return;
      }
      case 'EpicUpdated':
        await trx
          .updateTable('epics')
          .set({ ...event.data.changes, updated_at: at })
          .where('id', '=', id)
          .execute();
        await refreshDates(trx, id);
        return;
      case 'EpicClosed':
        await trx.updateTable('epics').set({ state: 'closed', closed_at: at, updated_at: at }).where('id', '=', id).execute();
        return;
      case 'EpicReopened':
        await trx.updateTable('epics').set({ state: 'opened', closed_at: null, updated_at: at }).where('id', '=', id).execute();
        return;
      case 'EpicDeleted': {
        const row = await trx.deleteFrom('epics').where('id', '=', id).returning('parent_id').executeTakeFirst();
        if (row) await refreshDates(trx, row.parent_id);
        return;
      }
      default:
        unhandled(event);
    }
  },
};
