import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { broadcastMessageEvents, type BroadcastMessageEvent } from '../../domain/broadcast-messages.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

/**
 * Inline: the admin API reads what it just wrote. Each event is applied once, guarded by
 * its stream's version (broadcast_messages_stream_versions), so a replayed creation does not
 * bring a deleted message back.
 */
export const broadcastMessagesProjector: Projector = {
  name: 'broadcast_messages',
  version: 1,
  mode: 'inline',
  handles: eventTypesOf(broadcastMessageEvents),
  tables: ['broadcast_messages', 'broadcast_messages_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    if (!(await claimStreamVersion(trx, 'broadcast_messages_stream_versions', stored))) return;
    const event = stored as unknown as BroadcastMessageEvent & ProjectedEvent;
    const at = stored.occurredAt.toISOString();
    switch (event.type) {
      case 'BroadcastMessageCreated':
        await trx
          .insertInto('broadcast_messages')
          .values({ ...event.data, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      case 'BroadcastMessageUpdated':
        await trx
          .updateTable('broadcast_messages')
          .set({ ...event.data.changes, updated_at: at })
          .where('id', '=', event.data.id)
          .execute();
        return;
      case 'BroadcastMessageDeleted':
        await trx.deleteFrom('broadcast_messages').where('id', '=', event.data.id).execute();
        return;
      default:
        return unhandled(event);
    }
  },
};
