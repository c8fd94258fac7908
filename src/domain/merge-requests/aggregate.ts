import { defineAggregate } from '../aggregate.js';
import { mergeRequestClaims, mergeRequestDecider } from './decider.js';
import { mergeRequestEventIndex, mergeRequestEvents, mergeRequestStreamId } from './events.js';

/** One merge request of a project (src/domain/merge-requests/). */
export const mergeRequests = defineAggregate({
  name: 'merge_requests',
  streamId: mergeRequestStreamId,
  events: mergeRequestEvents,
  decider: mergeRequestDecider,
  claims: mergeRequestClaims,
  index: mergeRequestEventIndex,
  idSequence: 'merge_requests_id_seq',
});
