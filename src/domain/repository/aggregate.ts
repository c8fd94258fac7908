import { defineAggregate } from '../aggregate.js';
import { refStreamId, repositoryDecider, repositoryEventIndex, repositoryEvents, repositoryStreamId, repositoryUpcasters } from './decider.js';

/** A ref of a project's repository: a branch or a tag (src/domain/repository/), each its own stream. */
export const repository = defineAggregate({
  name: 'repository',
  streamId: refStreamId,
  predecessor: repositoryStreamId,
  events: repositoryEvents,
  decider: repositoryDecider,
  index: repositoryEventIndex,
  upcasters: repositoryUpcasters,
});
