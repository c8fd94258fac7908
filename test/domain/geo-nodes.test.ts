import { describe, expect, it } from 'vitest';
import {
  GEO_NODE_DEFAULTS,
  type GeoNodeAttributes,
  type GeoNodeCommand,
  type GeoNodeEvent,
  geoNodeClaims,
  geoNodeDecider,
  geoNodeEventIndex,
  geoNodeStreamId,
} from '../../src/domain/geo-nodes.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(geoNodeDecider);

const attributes: GeoNodeAttributes = { name: 'eu', url: 'https://eu.example.com/', internal_url: null, ...GEO_NODE_DEFAULTS };
const created: GeoNodeEvent = { type: 'GeoNodeCreated', data: { id: 3, primary: false, ...attributes } };
const create = (extra: Partial<GeoNodeAttributes> = {}, primary = false): GeoNodeCommand => ({
  type: 'CreateGeoNode',
  primary,
  currentNodeName: 'me',
  attributes: { ...attributes, ...extra },
});
const update = (extra: Partial<GeoNodeAttributes>): GeoNodeCommand => ({ type: 'UpdateGeoNode', currentNodeName: 'me', attributes: extra });

describe('Geo nodes decider', () => {
  it('names one stream per node and indexes its events by the node', () => {
    expect(geoNodeStreamId(3)).toBe('geo-node-3');
    expect(geoNodeEventIndex(created)).toEqual({ targetType: 'GeoNode', targetId: 3 });
  });

  it('creates a node, its URLs with their ending slash', () => {
    on(3).given().when(create({ url: 'https://eu.example.com' })).then([created]);
    on(3)
      .given()
      .when(create({ internal_url: 'https://eu.internal' }))
      .then([{ type: 'GeoNodeCreated', data: { ...created.data, internal_url: 'https://eu.internal/' } }]);
    on(3).given(created).when(create()).then(rejected('invalid'));
  });

  it('validates as GeoNode does', () => {
    on(3).given().when(create({ name: ' ' })).then(rejected('invalid', { fields: { name: ["can't be blank"] } }));
    on(3).given().when(create({ url: 'gopher://x' })).then(rejected('invalid', { fields: { url: ['is blocked: Only allowed schemes are http, https'] } }));
    on(3).given().when(create({ files_max_capacity: -1 })).then(rejected('invalid', { fields: { files_max_capacity: ['must be greater than or equal to 0'] } }));
    on(3).given().when(create({ enabled: false }, true)).then(rejected('invalid', { fields: { enabled: ['Geo primary node cannot be disabled'] } }));
    on(3)
      .given()
      .when(create({ name: 'me' }))
      .then(rejected('invalid', { fields: { base: ['Current node must be the primary node or you will be locking yourself out'] } }));
    on(3).given().when(create({ name: 'me' }, true)).then([{ type: 'GeoNodeCreated', data: { ...created.data, name: 'me', primary: true } }]);
  });

  it('updates only what changes, deletes once', () => {
    on(3).given(created).when(update({ repos_max_capacity: 1, files_max_capacity: 10 })).then([{ type: 'GeoNodeUpdated', data: { id: 3, changes: { repos_max_capacity: 1 } } }]);
    on(3).given(created).when(update({ repos_max_capacity: 25 })).then([]);
    on(3).given().when(update({ repos_max_capacity: 1 })).then(rejected('not_found'));
    on(3).given(created).when({ type: 'DeleteGeoNode' }).then([{ type: 'GeoNodeDeleted', data: { id: 3 } }]);
    on(3).given(created, { type: 'GeoNodeDeleted', data: { id: 3 } }).when({ type: 'DeleteGeoNode' }).then(rejected('not_found'));
  });

  it('claims the name case-insensitively, and the one primary', () => {
    const before = { id: 3, node: null };
    expect(geoNodeClaims({ type: 'GeoNodeCreated', data: { ...created.data, name: 'EU', primary: true } }, before).acquire.map((c) => [c.kind, c.key])).toEqual([
      ['geo_node_name', 'eu'],
      ['geo_node_primary', 'primary'],
    ]);
    const state = { id: 3, node: { ...attributes, primary: false } };
    expect(geoNodeClaims({ type: 'GeoNodeUpdated', data: { id: 3, changes: { name: 'us' } } }, state)).toEqual({
      acquire: [expect.objectContaining({ kind: 'geo_node_name', key: 'us' })],
      release: [expect.objectContaining({ kind: 'geo_node_name', key: 'eu' })],
    });
  });
});
