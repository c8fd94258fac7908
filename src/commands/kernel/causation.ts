import type { EventMetadata, StoredEvent } from '../../eventstore/types.js';

/**
 * The metadata of what a reactor appends because of `event`: the triggering request's actor,
 * IP and origin, caused by that event and in its correlation (the first event of the chain).
 */
export const causedBy = (event: StoredEvent): EventMetadata => ({
  ...event.metadata,
  causation_id: event.eventId,
  correlation_id: event.metadata.correlation_id ?? event.eventId,
});
