import { defineAggregate } from '../aggregate.js';
import { containerRepositoryClaims, containerRepositoryDecider, containerRepositoryEventIndex, containerRepositoryEvents, containerRepositoryStreamId } from './decider.js';

/** One container repository of a project and its tags (src/domain/container-repositories/). */
export const containerRepositories = defineAggregate({
  name: 'container_repositories',
  streamId: containerRepositoryStreamId,
  events: containerRepositoryEvents,
  decider: containerRepositoryDecider,
  claims: containerRepositoryClaims,
  index: containerRepositoryEventIndex,
  idSequence: 'container_repositories_id_seq',
});
