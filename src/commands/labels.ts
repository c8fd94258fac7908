import { labelClaimRefusal, labelClaims, labelDecider, labelEventIndex, labelEvents, labelStreamId } from '../domain/labels.js';
import { defineAggregate } from './aggregate.js';

/** One label of a project (src/domain/labels.ts). */
export const labels = defineAggregate({
  name: 'labels',
  streamId: labelStreamId,
  events: labelEvents,
  decider: labelDecider,
  claims: labelClaims,
  claimRefusal: labelClaimRefusal,
  index: labelEventIndex,
});
