import { z } from 'zod';
import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { invalid, recordNotFound } from './errors.js';
import { defineAggregate } from './aggregate.js';

/**
 * Geo nodes (GitLab EE's GeoNode, administered through API::GeoNodes, 12.x): one stream per
 * node, `geo-node-<id>`. A node's status is not here: it is what the node reports (or, for
 * the current node, what it measures), kept outside the log (src/projections/geo-nodes/).
 */

// ───────────────────────────── Events ─────────────────────────────

const attributes = {
  name: z.string(),
  url: z.string(),
  /** null: the node is reached at `url` (GitLab's reader falls back to it). */
  internal_url: z.string().nullable(),
  enabled: z.boolean(),
  files_max_capacity: z.int(),
  repos_max_capacity: z.int(),
  verification_max_capacity: z.int(),
  container_repositories_max_capacity: z.int(),
  sync_object_storage: z.boolean(),
};

export const geoNodeEvents = {
  GeoNodeCreated: z.strictObject({ id: z.int(), primary: z.boolean(), ...attributes }),
  /** Only the attributes that changed. */
  GeoNodeUpdated: z.strictObject({ id: z.int(), changes: z.strictObject(attributes).partial() }),
  GeoNodeDeleted: z.strictObject({ id: z.int() }),
} satisfies EventSchemas;

export type GeoNodeEvent = EventOf<typeof geoNodeEvents>;

export const geoNodeStreamId = (id: number) => `geo-node-${id}`;

export const geoNodeEventIndex = (event: GeoNodeEvent): FeedIndex => ({ targetType: 'GeoNode', targetId: event.data.id });

// ───────────────────────────── State ─────────────────────────────

export type GeoNodeAttributes = { readonly [K in keyof typeof attributes]: z.infer<(typeof attributes)[K]> };

export interface GeoNodeRecord extends GeoNodeAttributes {
  readonly primary: boolean;
}

export interface GeoNodeState {
  readonly id: number;
  /** null before creation and after deletion. */
  readonly node: GeoNodeRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** GitLab's column defaults (`geo_nodes` in db/schema.rb, 12.x). */
export const GEO_NODE_DEFAULTS = {
  enabled: true,
  files_max_capacity: 10,
  repos_max_capacity: 25,
  verification_max_capacity: 100,
  container_repositories_max_capacity: 10,
  sync_object_storage: false,
} as const;

/**
 * `currentNodeName` is this instance's node name (GitLab's `geo_node_name`): a secondary of
 * that name would lock this instance out.
 */
export type GeoNodeCommand =
  | { readonly type: 'CreateGeoNode'; readonly primary: boolean; readonly attributes: GeoNodeAttributes; readonly currentNodeName: string }
  | { readonly type: 'UpdateGeoNode'; readonly attributes: Partial<GeoNodeAttributes>; readonly currentNodeName: string }
  | { readonly type: 'DeleteGeoNode' };

// ───────────────────────────── Normalisation ─────────────────────────────

/** GitLab's `add_ending_slash`: URLs are stored with a trailing slash. */
export const withEndingSlash = (value: string) => (value === '' || value.endsWith('/') ? value : `${value}/`);

/**
 * The model's writers: url with its ending slash; internal_url dropped when it is the url;
 * a name that is the url without its slash gets it (`looks_like_url_field_missing_slash?`);
 * `strip_attributes :name`.
 */
function normalise<T extends Partial<GeoNodeAttributes>>(asked: T, current: GeoNodeAttributes | null): T {
  const out: Record<string, unknown> = { ...asked };
  if (asked.url !== undefined) out.url = withEndingSlash(asked.url);
  const url = (out.url as string | undefined) ?? current?.url ?? '';
  if (asked.name !== undefined) {
    const name = asked.name.trim();
    out.name = withEndingSlash(name) === url ? url : name;
  }
  if (asked.internal_url !== undefined) {
    const internal = asked.internal_url;
    out.internal_url = internal === null || internal === '' || withEndingSlash(internal) === url ? null : withEndingSlash(internal);
  } else if (asked.url !== undefined && current?.internal_url === url) {
    out.internal_url = null;
  }
  return out as T;
}

// ───────────────────────────── Validation ─────────────────────────────

/** AddressableUrlValidator with GitLab's defaults (local addresses allowed): scheme and syntax. */
function urlProblem(value: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'is blocked: URI is invalid';
  }
  if (/[\n\r\s]/.test(value)) return 'is blocked: URI is invalid';
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'is blocked: Only allowed schemes are http, https';
  return null;
}

const CAPACITIES = ['repos_max_capacity', 'files_max_capacity', 'verification_max_capacity', 'container_repositories_max_capacity'] as const;

/** GeoNode's validations (ee/app/models/geo_node.rb, 12.x), in the order the model declares them. */
function validate(node: GeoNodeRecord, currentNodeName: string): void {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (node.name.trim() === '') add('name', "can't be blank");
  if (node.name.length > 255) add('name', 'is too long (maximum is 255 characters)');
  if (node.url.trim() === '') add('url', "can't be blank");
  else {
    const problem = urlProblem(node.url);
    if (problem) add('url', problem);
  }
  if (node.internal_url !== null) {
    const problem = urlProblem(node.internal_url);
    if (problem) add('internal_url', problem);
  }
  if (node.primary && !node.enabled) add('enabled', 'Geo primary node cannot be disabled');
  for (const field of CAPACITIES) if (node[field] < 0) add(field, 'must be greater than or equal to 0');
  // GitLab: "Prevent locking yourself out".
  if (!node.primary && node.name === currentNodeName) add('base', 'Current node must be the primary node or you will be locking yourself out');
  if (Object.keys(errors).length > 0) throw invalid(errors);
}

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): GeoNodeState => ({ id, node: null });

function evolve(state: GeoNodeState, event: GeoNodeEvent): GeoNodeState {
  switch (event.type) {
    case 'GeoNodeCreated': {
      const { id: _id, ...node } = event.data;
      return { id: state.id, node };
    }
    case 'GeoNodeUpdated':
      return state.node ? { id: state.id, node: { ...state.node, ...event.data.changes } } : state;
    case 'GeoNodeDeleted':
      return { id: state.id, node: null };
    default:
      return unhandled(event);
  }
}

function decide(command: GeoNodeCommand, state: GeoNodeState): GeoNodeEvent[] {
  const { id } = state;
  switch (command.type) {
    case 'CreateGeoNode': {
      if (state.node) throw invalid({ id: ['has already been taken'] });
      const node: GeoNodeRecord = { primary: command.primary, ...normalise(command.attributes, null) };
      validate(node, command.currentNodeName);
      return [{ type: 'GeoNodeCreated', data: { id, ...node } }];
    }
    case 'UpdateGeoNode': {
      const current = state.node;
      if (!current) throw recordNotFound('GeoNode');
      const asked = normalise(definedOnly(command.attributes), current);
      validate({ ...current, ...asked }, command.currentNodeName);
      const changes = Object.fromEntries(
        Object.entries(asked).filter(([key, value]) => current[key as keyof GeoNodeAttributes] !== value),
      ) as Partial<GeoNodeAttributes>;
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'GeoNodeUpdated', data: { id, changes } }];
    }
    case 'DeleteGeoNode':
      if (!state.node) throw recordNotFound('GeoNode');
      return [{ type: 'GeoNodeDeleted', data: { id } }];
    default:
      return unhandled(command);
  }
}

const definedOnly = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

export const geoNodeDecider: Decider<GeoNodeCommand, GeoNodeEvent, GeoNodeState, number> = {
  initialState,
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** `validates :name, uniqueness: { case_sensitive: false }`. */
const nameClaim = (name: string) => ({ kind: 'geo_node_name', key: name.toLowerCase(), conflictMessage: 'Geo node name has already been taken' });
/** `validates :primary, uniqueness: { message: 'node already exists' }, if: :primary`: one primary. */
const primaryClaim = { kind: 'geo_node_primary', key: 'primary', conflictMessage: 'Geo primary node already exists' };

/** GitLab validates both on the model: field errors. */
export const geoNodeClaimRefusal: ClaimRefusal = (claim) =>
  invalid(claim.kind === 'geo_node_primary' ? { primary: ['node already exists'] } : { name: ['has already been taken'] });

export function geoNodeClaims(event: GeoNodeEvent, before: GeoNodeState): ClaimChanges {
  switch (event.type) {
    case 'GeoNodeCreated':
      return { acquire: [nameClaim(event.data.name), ...(event.data.primary ? [primaryClaim] : [])], release: [] };
    case 'GeoNodeUpdated': {
      const { name } = event.data.changes;
      if (name === undefined || !before.node || name.toLowerCase() === before.node.name.toLowerCase()) return NO_CLAIMS;
      return { acquire: [nameClaim(name)], release: [nameClaim(before.node.name)] };
    }
    case 'GeoNodeDeleted':
      return before.node ? { acquire: [], release: [nameClaim(before.node.name), ...(before.node.primary ? [primaryClaim] : [])] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One Geo node (src/domain/geo-nodes.ts); ids come from geo_nodes_id_seq. */
export const geoNodes = defineAggregate({
  name: 'geo_nodes',
  streamId: geoNodeStreamId,
  events: geoNodeEvents,
  decider: geoNodeDecider,
  claims: geoNodeClaims,
  claimRefusal: geoNodeClaimRefusal,
  index: geoNodeEventIndex,
  idSequence: 'geo_nodes_id_seq',
});
