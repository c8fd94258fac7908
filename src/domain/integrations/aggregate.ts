import { defineAggregate } from '../aggregate.js';
import { integrationDecider, integrationEventIndex, integrationEvents, integrationStreamId } from './decider.js';

/** A project's integration of one kind (src/domain/integrations/). */
export const integrations = defineAggregate({
  name: 'integrations',
  streamId: integrationStreamId,
  events: integrationEvents,
  decider: integrationDecider,
  index: integrationEventIndex,
  idSequence: 'integrations_id_seq',
});
