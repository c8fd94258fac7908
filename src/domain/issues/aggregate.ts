import { defineAggregate } from '../aggregate.js';
import { issueClaims, issueDecider } from './decider.js';
import { issueEventIndex, issueEvents, issueStreamId } from './events.js';

/** One issue of a project (src/domain/issues/). */
export const issues = defineAggregate({
  name: 'issues',
  streamId: issueStreamId,
  events: issueEvents,
  decider: issueDecider,
  claims: issueClaims,
  index: issueEventIndex,
  idSequence: 'issues_id_seq',
});
