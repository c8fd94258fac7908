import { memberEventIndex, memberEvents, membersDecider, membersStreamId, memberUpcasters } from '../domain/members.js';
import { defineAggregate } from './aggregate.js';

/** The members and access requests of one group or project (src/domain/members.ts). */
export const members = defineAggregate({
  name: 'members',
  streamId: membersStreamId,
  events: memberEvents,
  decider: membersDecider,
  index: memberEventIndex,
  upcasters: memberUpcasters,
});
