import { defineAggregate } from '../aggregate.js';
import { hookDecider, hookEventIndex, hookEvents, hookStreamId } from './decider.js';

/** A project, group or system webhook (src/domain/hooks/). */
export const hooks = defineAggregate({
  name: 'hooks',
  streamId: hookStreamId,
  events: hookEvents,
  decider: hookDecider,
  index: hookEventIndex,
  idSequence: 'hooks_id_seq',
});
