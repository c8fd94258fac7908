import {
  broadcastMessageDecider,
  broadcastMessageEventIndex,
  broadcastMessageEvents,
  broadcastMessageStreamId,
} from '../domain/broadcast-messages.js';
import { defineAggregate } from './aggregate.js';

/** One broadcast message (src/domain/broadcast-messages.ts); ids come from broadcast_messages_id_seq. */
export const broadcastMessages = defineAggregate({
  name: 'broadcast_messages',
  streamId: broadcastMessageStreamId,
  events: broadcastMessageEvents,
  decider: broadcastMessageDecider,
  index: broadcastMessageEventIndex,
});
