import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { geoNodeEvents, type GeoNodeEvent } from '../../domain/geo-nodes.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

/** Inline: the admin API reads what it just wrote. Each event is applied once (geo_nodes_stream_versions). */
export const geoNodesProjector: Projector = {
  name: 'geo_nodes',
  version: 1,
  mode: 'inline',
  handles: eventTypesOf(geoNodeEvents),
  tables: ['geo_nodes', 'geo_nodes_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    if (!(await claimStreamVersion(trx, 'geo_nodes_stream_versions', stored))) return;
    const event = stored as unknown as GeoNodeEvent & ProjectedEvent;
    const at = stored.occurredAt.toISOString();
    switch (event.type) {
      case 'GeoNodeCreated':
        await trx
          .insertInto('geo_nodes')
          .values({ ...event.data, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      case 'GeoNodeUpdated':
        await trx
          .updateTable('geo_nodes')
          .set({ ...event.data.changes, updated_at: at })
          .where('id', '=', event.data.id)
          .execute();
        return;
      case 'GeoNodeDeleted':
        await trx.deleteFrom('geo_nodes').where('id', '=', event.data.id).execute();
        return;
      default:
        return unhandled(event);
    }
  },
};
