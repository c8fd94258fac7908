import { defineAggregate } from '../aggregate.js';
import { repositoryDecider, repositoryEventIndex, repositoryEvents, repositoryStreamId, repositoryUpcasters } from './decider.js';

/** A project's repository: its branches (src/domain/repository/). */
export const repository = defineAggregate({
  name: 'repository',
  streamId: repositoryStreamId,
  events: repositoryEvents,
  decider: repositoryDecider,
  index: repositoryEventIndex,
  upcasters: repositoryUpcasters,
});
