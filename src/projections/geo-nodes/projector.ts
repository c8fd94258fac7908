import { defineProjector } from '../projector.js';

/** Inline: the admin API reads what it just wrote. Each event is applied once (the kernel guards). */
export const geoNodesProjector = defineProjector({
  name: 'geo_nodes',
  tables: ['geo_nodes'],
  on: {
    GeoNodeCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('geo_nodes')
        .values({ ...data, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    GeoNodeUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('geo_nodes')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    GeoNodeDeleted: async ({ data }, trx) => trx.deleteFrom('geo_nodes').where('id', '=', data.id).execute(),
  },
});
