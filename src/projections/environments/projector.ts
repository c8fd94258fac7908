import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { environmentEvents, type EnvironmentEvent } from '../../domain/environments.js';
import { eventTypesOf } from '../../domain/events.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: the API reads what it just wrote. An environment's own events are applied once
 * (environments_stream_versions); a project's deletion takes its environments with it, by an
 * absolute condition that a replay finds nothing more to do for.
 */
export const environmentsProjector: Projector = {
  name: 'environments',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(environmentEvents), 'ProjectDeleted'],
  tables: ['environments', 'environments_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (EnvironmentEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('environments').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'environments_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id } = event.data;
    switch (event.type) {
      case 'EnvironmentCreated': {
        const { project_id, name, slug, external_url } = event.data;
        await trx
          .insertInto('environments')
          .values({ id, project_id, name, slug, external_url, state: 'available', created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      }
      case 'EnvironmentUpdated':
        await trx
          .updateTable('environments')
          .set({ ...event.data.changes, updated_at: at })
          .where('id', '=', id)
          .execute();
        return;
      case 'EnvironmentStopped':
        await trx.updateTable('environments').set({ state: 'stopped', updated_at: at }).where('id', '=', id).execute();
        return;
      case 'EnvironmentDeleted':
        await trx.deleteFrom('environments').where('id', '=', id).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
