import { Hono, type Context } from 'hono';
import { sql } from 'kysely';
import { GEO_NODE_DEFAULTS, geoNodes } from '../../domain/geo-nodes.js';
import { forbidden, notFound, paramErrors, recordNotFound } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import { toExportedEvent } from '../../eventstore/export.js';
import { readRowsAfter } from '../../eventstore/seal.js';
import { geoNodeNameOf } from '../../geo/keys.js';
import {
  failuresQuery,
  findGeoNode,
  findGeoNodeByName,
  geoNodesQuery,
  logHead,
  storeStatus,
  storedStatuses,
} from '../../projections/geo-nodes/queries.js';
import { geoNodeStatusFigures, measurePrimary, measureSecondary, type GeoNodeStatusFigures } from '../../projections/geo-nodes/status.js';
import type { GeoNodeRow } from '../../projections/geo-nodes/tables.js';
import { REVISION, VERSION } from '../../version.js';
import { toGeoFailure, toGeoNode, toGeoNodeStatus } from '../entities/geo-nodes.js';
import { requireAdmin, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { routeNotFound, unauthorized } from '../kernel/errors.js';
import { pageOf, paginate, setPaginationHeaders } from '../kernel/pagination.js';
import { declaration, integerCheck, optional, params, rawParams, required, t, withDefault, type Shape } from '../kernel/params.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { pathRow } from '../kernel/scope.js';
import { newId, run } from '../../commands/kernel/run.js';

const capacities = {
  files_max_capacity: optional(t.integer()),
  repos_max_capacity: optional(t.integer()),
  verification_max_capacity: optional(t.integer()),
  container_repositories_max_capacity: optional(t.integer()),
};

const createParams = {
  primary: optional(t.boolean()),
  enabled: optional(t.boolean()),
  name: required(t.string()),
  url: required(t.string()),
  internal_url: optional(t.string()),
  ...capacities,
  sync_object_storage: optional(t.boolean()),
} satisfies Shape;

const updateParams = {
  enabled: optional(t.boolean()),
  name: optional(t.string()),
  url: optional(t.string()),
  internal_url: optional(t.string()),
  ...capacities,
  sync_object_storage: optional(t.boolean()),
} satisfies Shape;

const failuresParams = {
  type: optional(t.values(['wiki', 'repository'])),
  failure_type: withDefault(t.string(), 'sync'),
} satisfies Shape;
const statusParams = { refresh: optional(t.boolean()) } satisfies Shape;
const eventsParams = { after: withDefault(t.string(), '0:0'), limit: withDefault(t.integer(), 500) } satisfies Shape;

/** `requires :id, type: Integer` (the node); without the `geo` licence no route matches (404). */
const ON_NODE = { pathIds: ['id'], auth: 'admin' } as const;
const ADMIN = { auth: 'admin' } as const;

/**
 * Geo is premium (SPEC.md). GitLab EE's API has no licence check of its own here, and GitLab
 * CE has no such route: below premium the endpoints are not there (Grape's 404), before
 * authentication as for any unknown path.
 */
function geoAvailable(c: Context): void {
  if (!licensed(appContext(c).config.plan, 'geo')) throw routeNotFound();
}

/** `route_param :id, type: Integer` then `GeoNode.find` (ActiveRecord::RecordNotFound → "404 Not found"). */
async function nodeOf(c: Context): Promise<GeoNodeRow> {
  const check = integerCheck(c, 'id');
  if (check) throw paramErrors([check]);
  return pathRow(c, 'id', findGeoNode, () => recordNotFound('GeoNode'));
}

/** GitLab's Gitlab::Geo.current_node: the node named as this instance is. */
const currentNode = (c: Context) => findGeoNodeByName(appContext(c).db, appContext(c).config.geo.nodeName);

/** This instance measuring itself, as the node it is. */
async function measureCurrent(c: Context, node: GeoNodeRow): Promise<GeoNodeStatusFigures> {
  const { db, config, commands } = appContext(c);
  const options = { now: commands.now(), version: VERSION, revision: REVISION };
  return config.geo.secondary ? measureSecondary(db, node, options) : measurePrimary(db, node, options);
}

/**
 * GitLab's `geo_node_status`: the current node's own status, measured now; another node's
 * the last one it reported; undefined when it never did.
 */
async function statusOf(c: Context, node: GeoNodeRow) {
  const { config, commands, db } = appContext(c);
  if (node.name === config.geo.nodeName) return toGeoNodeStatus(await measureCurrent(c, node), config, commands.now());
  const stored = (await storedStatuses(db)).find((s) => s.geo_node_id === node.id);
  return stored && toGeoNodeStatus(geoNodeStatusFigures.parse(stored.status), config, stored.received_at);
}

/** A node calling the primary (`authenticate_by_gitlab_geo_node_token!`): a `GL-Geo` header of a secondary node. */
async function requireGeoNode(c: Context): Promise<GeoNodeRow> {
  const { config, db } = appContext(c);
  const secret = config.geo.secret;
  const name = secret === undefined ? undefined : geoNodeNameOf(c.req.header('authorization'), secret);
  const node = name === undefined ? undefined : await findGeoNodeByName(db, name);
  if (!node || node.primary) throw unauthorized();
  return node;
}

/** GitLab's API::GeoNodes (EE 12.x): `before { authenticated_as_admin! }` on every endpoint. */
export const geoNodeRoutes = new Hono<AppEnv>()
  .post('/geo_nodes', documented({ summary: 'Create a new Geo node', params: createParams, ...ADMIN, responses: { 201: 'GeoNode', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    const w = await requireWriter(c, { admin: true });
    const p = await params(c, createParams);
    const { db, config } = appContext(c);
    const id = await newId(w, geoNodes);
    await run(
      w,
      geoNodes,
      id,
      {
        type: 'CreateGeoNode',
        primary: p.primary ?? false,
        currentNodeName: config.geo.nodeName,
        attributes: {
          name: p.name,
          url: p.url,
          internal_url: p.internal_url ?? null,
          enabled: p.enabled ?? GEO_NODE_DEFAULTS.enabled,
          files_max_capacity: p.files_max_capacity ?? GEO_NODE_DEFAULTS.files_max_capacity,
          repos_max_capacity: p.repos_max_capacity ?? GEO_NODE_DEFAULTS.repos_max_capacity,
          verification_max_capacity: p.verification_max_capacity ?? GEO_NODE_DEFAULTS.verification_max_capacity,
          container_repositories_max_capacity: p.container_repositories_max_capacity ?? GEO_NODE_DEFAULTS.container_repositories_max_capacity,
          sync_object_storage: p.sync_object_storage ?? GEO_NODE_DEFAULTS.sync_object_storage,
        },
      },
    );
    return c.json(toGeoNode((await findGeoNode(db, id))!, config), 201);
  })

  .get('/geo_nodes', documented({ summary: 'Retrieves the available Geo nodes', ...ADMIN, responses: { 200: 'GeoNode[]', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    await requireAdmin(c);
    const { db, config } = appContext(c);
    const rows = await paginate(c, geoNodesQuery(db), (q) => q.orderBy('id'));
    return c.json(rows.map((row) => toGeoNode(row, config)));
  })

  // `GeoNodeStatus.all`: every node that has a status — the current node's measured now.
  .get('/geo_nodes/status', documented({ summary: 'Get status for all Geo nodes', ...ADMIN, responses: { 200: 'GeoNodeStatus[]', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    await requireAdmin(c);
    const { db, config, commands } = appContext(c);
    const current = await currentNode(c);
    const statuses = [];
    if (current) statuses.push(toGeoNodeStatus(await measureCurrent(c, current), config, commands.now()));
    for (const stored of await storedStatuses(db)) {
      if (stored.geo_node_id !== current?.id) statuses.push(toGeoNodeStatus(geoNodeStatusFigures.parse(stored.status), config, stored.received_at));
    }
    statuses.sort((a, b) => a.geo_node_id - b.geo_node_id);
    const page = await pageOf(c);
    setPaginationHeaders(c, page, statuses.length);
    return c.json(statuses.slice(page.offset, page.offset + page.perPage));
  })

  .get('/geo_nodes/current/failures', documented({ summary: 'Get project registry failures for the current Geo node', params: failuresParams, ...ADMIN, responses: { 200: 'ProjectRegistry[]', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    await requireAdmin(c);
    const p = await params(c, failuresParams);
    const current = await currentNode(c);
    if (!current) throw notFound('Geo node not found');
    if (current.primary) throw forbidden('Failures can only be requested from a secondary node');
    if (!['sync', 'verification', 'checksum_mismatch'].includes(p.failure_type)) throw notFound('Failure type unknown');
    const { db } = appContext(c);
    const query = failuresQuery(db, p.failure_type as 'sync' | 'verification' | 'checksum_mismatch');
    // forgelog replicates no wikis: every failure is of a repository (a project's events).
    const rows = await paginate(c, p.type === 'wiki' ? query.where(sql<boolean>`false`) : query, (q) => q.orderBy('global_position'));
    return c.json(rows.map(toGeoFailure));
  })

  .get('/geo_nodes/:id', documented({ summary: 'Get a single GeoNode', ...ON_NODE, responses: { 200: 'GeoNode', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    await requireAdmin(c);
    return c.json(toGeoNode(await nodeOf(c), appContext(c).config));
  })

  .get('/geo_nodes/:id/status', documented({ summary: 'Get metrics for a single Geo node', params: statusParams, ...ON_NODE, responses: { 200: 'GeoNodeStatus', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    await requireAdmin(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    p.check(integerCheck(c, 'id'));
    p.parse(statusParams);
    p.done();
    const status = await statusOf(c, await nodeOf(c));
    if (!status) throw notFound('Status for Geo node not found');
    return c.json(status);
  })

  // GitLab repairs a secondary's missing OAuth application. forgelog's nodes authenticate
  // with keys derived from the shared secret, which cannot go missing: nothing to repair,
  // and the answer is GitLab's when there is none, the node's status (null without one).
  .post('/geo_nodes/:id/repair', documented({ summary: 'Repair authentication of the Geo node', ...ON_NODE, responses: { 200: 'GeoNodeStatus', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    await requireAdmin(c);
    const status = await statusOf(c, await nodeOf(c));
    return c.json(status ?? null, 200);
  })

  .put('/geo_nodes/:id', documented({ summary: 'Update a Geo node', params: updateParams, ...ON_NODE, responses: { 200: 'GeoNode', ...REFUSED } }), async (c) => {
    geoAvailable(c);
    const w = await requireWriter(c, { admin: true });
    const raw = await rawParams(c);
    const declared = declaration(raw);
    declared.check(integerCheck(c, 'id'));
    const p = declared.parse(updateParams);
    declared.done();
    const node = await nodeOf(c);
    const { db, config } = appContext(c);
    await run(
      w,
      geoNodes,
      node.id,
      {
        type: 'UpdateGeoNode',
        currentNodeName: config.geo.nodeName,
        attributes: {
          name: p.name,
          url: p.url,
          // Sent as null or blank: back to the url.
          internal_url: 'internal_url' in raw && (raw.internal_url === null || raw.internal_url === '') ? null : p.internal_url,
          enabled: p.enabled,
          files_max_capacity: p.files_max_capacity,
          repos_max_capacity: p.repos_max_capacity,
          verification_max_capacity: p.verification_max_capacity,
          container_repositories_max_capacity: p.container_repositories_max_capacity,
          sync_object_storage: p.sync_object_storage,
        },
      },
    );
    return c.json(toGeoNode((await findGeoNode(db, node.id))!, config));
  })

  .delete('/geo_nodes/:id', documented({ summary: 'Delete an existing Geo node', ...ON_NODE, responses: { 204: null, ...REFUSED } }), async (c) => {
    geoAvailable(c);
    const w = await requireWriter(c, { admin: true });
    const node = await nodeOf(c);
    await run(w, geoNodes, node.id, { type: 'DeleteGeoNode' });
    return c.body(null, 204);
  })

  // ───────────── Node to primary (docs/geo.md): not GitLab's admin API ─────────────

  // GitLab's API::Geo `post 'status'`: a secondary reports its status to the primary.
  .post('/geo/status', documented({ summary: "Posts the current node status to the primary (a secondary node, authenticated by its Geo key; the body is the node's GeoNodeStatus)", auth: 'public', responses: { 201: 'GeoNodeStatus', 400: 'Error', 401: 'Error', 404: 'Error' } }), async (c) => {
    geoAvailable(c);
    const node = await requireGeoNode(c);
    const parsed = geoNodeStatusFigures.safeParse(await rawParams(c));
    if (!parsed.success) throw paramErrors(['status is invalid']);
    const { db, commands, config } = appContext(c);
    const figures = { ...parsed.data, geo_node_id: node.id };
    const receivedAt = commands.now();
    await storeStatus(db, node.id, figures, receivedAt);
    return c.json(toGeoNodeStatus(figures, config, receivedAt), 201);
  })

  // forgelog's replication: the log after a checkpoint, in gap-free order, as stored.
  .get('/geo/replication/events', documented({ summary: 'The event log after a checkpoint, for a secondary node (forgelog; authenticated by its Geo key)', params: eventsParams, auth: 'public', responses: { 200: { type: 'object' }, 401: 'Error', 404: 'Error' } }), async (c) => {
    geoAvailable(c);
    await requireGeoNode(c);
    const p = await params(c, eventsParams);
    const match = /^(\d{1,20}):(\d{1,20})$/.exec(p.after);
    if (!match) throw paramErrors(['after is invalid']);
    if (p.limit < 1 || p.limit > 1000) throw paramErrors(['limit does not have a valid value']);
    const { db } = appContext(c);
    const rows = await readRowsAfter(db, { transactionId: match[1]!, globalPosition: match[2]! }, p.limit);
    // Read after the events: the head is at or past the last of them.
    const head = await logHead(db);
    return c.json({
      events: rows.map(toExportedEvent),
      last_event_id: head?.id ?? null,
      last_event_at: head?.at.toISOString() ?? null,
    });
  });
