import {
  protectedBranchClaims,
  protectedBranchDecider,
  protectedBranchEventIndex,
  protectedBranchEvents,
  protectedBranchStreamId,
} from '../domain/protected-branches.js';
import { defineAggregate } from './aggregate.js';

/** One protected branch of a project (src/domain/protected-branches.ts). */
export const protectedBranches = defineAggregate({
  name: 'protected_branches',
  streamId: protectedBranchStreamId,
  events: protectedBranchEvents,
  decider: protectedBranchDecider,
  claims: protectedBranchClaims,
  index: protectedBranchEventIndex,
});
