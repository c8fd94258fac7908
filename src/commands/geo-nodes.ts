import { geoNodeClaimRefusal, geoNodeClaims, geoNodeDecider, geoNodeEventIndex, geoNodeEvents, geoNodeStreamId } from '../domain/geo-nodes.js';
import { defineAggregate } from './aggregate.js';

/** One Geo node (src/domain/geo-nodes.ts); ids come from geo_nodes_id_seq. */
export const geoNodes = defineAggregate({
  name: 'geo_nodes',
  streamId: geoNodeStreamId,
  events: geoNodeEvents,
  decider: geoNodeDecider,
  claims: geoNodeClaims,
  claimRefusal: geoNodeClaimRefusal,
  index: geoNodeEventIndex,
});
