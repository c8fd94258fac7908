import { defineAggregate } from '../aggregate.js';
import { userEventIndex, userEvents, userStreamId, userUpcasters } from '../users.js';
import { userClaims, userDecider } from './decider.js';

/** One user: profile, password, state, status, tokens, custom attributes (src/domain/users.ts). */
export const users = defineAggregate({
  name: 'users',
  streamId: userStreamId,
  events: userEvents,
  decider: userDecider,
  claims: userClaims,
  index: userEventIndex,
  upcasters: userUpcasters,
  idSequence: 'users_id_seq',
});
