import { defineAggregate } from '../aggregate.js';
import { projectClaimRefusal, projectClaims } from './claims.js';
import { projectDecider } from './decider.js';
import { projectEventIndex, projectEvents, projectStreamId, projectUpcasters } from './events.js';

/** One project: settings, archiving, stars, removal (src/domain/projects/). */
export const projects = defineAggregate({
  name: 'projects',
  streamId: projectStreamId,
  events: projectEvents,
  decider: projectDecider,
  claims: projectClaims,
  claimRefusal: projectClaimRefusal,
  index: projectEventIndex,
  upcasters: projectUpcasters,
  idSequence: 'projects_id_seq',
});
