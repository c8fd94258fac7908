import type { StoredEvent } from '../../eventstore/types.js';
import type { CommandContext, Writer } from './context.js';

/**
 * The writer of what a reactor appends because of `event`: its events carry the triggering
 * request's actor, IP and origin, caused by that event and in its correlation (the first
 * event of the chain).
 */
export const causedBy = (ctx: CommandContext, event: StoredEvent): Writer => ({
  ctx,
  metadata: {
    ...event.metadata,
    causation_id: event.eventId,
    correlation_id: event.metadata.correlation_id ?? event.eventId,
  },
});
