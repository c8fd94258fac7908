import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { milestoneEvents, type MilestoneEvent } from '../../domain/milestones.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: the API reads what it just wrote. A milestone's own events are applied once
 * (milestones_stream_versions); a project's deletion takes its milestones and its iid
 * counter with it.
 */
export const milestonesProjector: Projector = {
  name: 'milestones',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(milestoneEvents), 'ProjectDeleted'],
  tables: ['milestones', 'milestone_iids', 'milestones_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (MilestoneEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('milestones').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'milestones_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id } = event.data;
    switch (event.type) {
      case 'MilestoneCreated': {
        const d = event.data;
        await trx
          .insertInto('milestones')
          .values({ id, project_id: d.project_id, iid: d.iid, title: d.title, description: d.description, state: 'active', start_date: d.start_date, due_date: d.due_date, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        await trx
          .insertInto('milestone_iids')
          .values({ project_id: d.project_id, last_iid: d.iid })
          .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ last_iid: eb.fn('greatest', [eb.ref('milestone_iids.last_iid'), eb.ref('excluded.last_iid')]) })))
          .execute();
        return;
      }
      case 'MilestoneUpdated':
        await trx
          .updateTable('milestones')
          .set({ ...event.data.changes, updated_at: at })
          .where('id', '=', id)
          .execute();
        return;
      case 'MilestoneClosed':
        await trx.updateTable('milestones').set({ state: 'closed', updated_at: at }).where('id', '=', id).execute();
        return;
      case 'MilestoneReopened':
        await trx.updateTable('milestones').set({ state: 'active', updated_at: at }).where('id', '=', id).execute();
        return;
      case 'MilestoneDeleted':
        await trx.deleteFrom('milestones').where('id', '=', id).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
