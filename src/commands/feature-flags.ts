import { featureFlagClaimRefusal, featureFlagClaims, featureFlagDecider } from '../domain/feature-flags/decider.js';
import { featureFlagEventIndex, featureFlagEvents, featureFlagStreamId } from '../domain/feature-flags/events.js';
import { defineAggregate } from './aggregate.js';

/** One feature flag of a project and its scopes (src/domain/feature-flags/). */
export const featureFlags = defineAggregate({
  name: 'feature_flags',
  streamId: featureFlagStreamId,
  events: featureFlagEvents,
  decider: featureFlagDecider,
  claims: featureFlagClaims,
  claimRefusal: featureFlagClaimRefusal,
  index: featureFlagEventIndex,
});
