import { defineAggregate } from '../aggregate.js';
import { featureFlagClaimRefusal, featureFlagClaims, featureFlagDecider } from './decider.js';
import { featureFlagEventIndex, featureFlagEvents, featureFlagStreamId } from './events.js';

/** One feature flag of a project and its scopes (src/domain/feature-flags/). */
export const featureFlags = defineAggregate({
  name: 'feature_flags',
  streamId: featureFlagStreamId,
  events: featureFlagEvents,
  decider: featureFlagDecider,
  claims: featureFlagClaims,
  claimRefusal: featureFlagClaimRefusal,
  index: featureFlagEventIndex,
  idSequence: 'feature_flags_id_seq',
});
