import { deployKeyClaimRefusal, deployKeyClaims, deployKeyDecider, deployKeyEventIndex, deployKeyEvents, deployKeyStreamId } from '../domain/deploy-keys.js';
import { defineAggregate } from './aggregate.js';

/** One deploy key and the projects it is enabled in (src/domain/deploy-keys.ts). */
export const deployKeys = defineAggregate({
  name: 'deploy_keys',
  streamId: deployKeyStreamId,
  events: deployKeyEvents,
  decider: deployKeyDecider,
  claims: deployKeyClaims,
  claimRefusal: deployKeyClaimRefusal,
  index: deployKeyEventIndex,
});
