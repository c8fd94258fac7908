import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { labelEvents, type LabelEvent } from '../../domain/labels.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: the API reads what it just wrote. A label's own events are applied once
 * (labels_stream_versions); a project's deletion takes its labels with it.
 */
export const labelsProjector: Projector = {
  name: 'labels',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(labelEvents), 'ProjectDeleted'],
  tables: ['labels', 'labels_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (LabelEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('labels').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'labels_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id } = event.data;
    switch (event.type) {
      case 'LabelCreated': {
        const { project_id, title, color, description, priority } = event.data;
        await trx
          .insertInto('labels')
          .values({ id, project_id, title, color, description, priority, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      }
      case 'LabelUpdated':
        await trx
          .updateTable('labels')
          .set({ ...event.data.changes, updated_at: at })
          .where('id', '=', id)
          .execute();
        return;
      case 'LabelDeleted':
        await trx.deleteFrom('labels').where('id', '=', id).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
