import { defineProjector } from '../projector.js';

/**
 * Inline: the admin API reads what it just wrote. Each event is applied once (the kernel
 * guards by its stream's version), so a replayed creation does not bring a deleted message back.
 */
export const broadcastMessagesProjector = defineProjector({
  name: 'broadcast_messages',
  tables: ['broadcast_messages'],
  on: {
    BroadcastMessageCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('broadcast_messages')
        .values({ ...data, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    BroadcastMessageUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('broadcast_messages')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    BroadcastMessageDeleted: async ({ data }, trx) => trx.deleteFrom('broadcast_messages').where('id', '=', data.id).execute(),
  },
});
