import { defineAggregate } from '../aggregate.js';
import { groupClaimRefusal, groupClaims } from './claims.js';
import { groupDecider, groupStreamId } from './decider.js';
import { groupEventIndex, groupEvents, groupUpcasters } from './events.js';

/** A group: its settings, its place in the tree, its custom attributes (src/domain/groups/). */
export const groups = defineAggregate({
  name: 'groups',
  streamId: groupStreamId,
  events: groupEvents,
  decider: groupDecider,
  claims: groupClaims,
  claimRefusal: groupClaimRefusal,
  index: groupEventIndex,
  upcasters: groupUpcasters,
  idSequence: 'namespaces_id_seq',
});
