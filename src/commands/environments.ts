import {
  environmentClaimRefusal,
  environmentClaims,
  environmentDecider,
  environmentEventIndex,
  environmentEvents,
  environmentStreamId,
} from '../domain/environments.js';
import { defineAggregate } from './aggregate.js';

/** One environment of a project (src/domain/environments.ts). */
export const environments = defineAggregate({
  name: 'environments',
  streamId: environmentStreamId,
  events: environmentEvents,
  decider: environmentDecider,
  claims: environmentClaims,
  claimRefusal: environmentClaimRefusal,
  index: environmentEventIndex,
});
