import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { BELOW_HORIZON } from '../../eventstore/store.js';
import type { GeoEventFailureRow, GeoNodeRow, GeoReplicationCursorRow } from './tables.js';

/** Every node (select without order: the route orders and pages it). */
export const geoNodesQuery = (db: Db) => db.selectFrom('geo_nodes').selectAll();

export const findGeoNode = (db: Db, id: number): Promise<GeoNodeRow | undefined> =>
  db.selectFrom('geo_nodes').selectAll().where('id', '=', id).executeTakeFirst();

export const findGeoNodeByName = (db: Db, name: string): Promise<GeoNodeRow | undefined> =>
  db.selectFrom('geo_nodes').selectAll().where('name', '=', name).executeTakeFirst();

/** The last event of the log in gap-free order (the events every reader can see), or none. */
export async function logHead(db: Db): Promise<{ id: string; at: Date } | undefined> {
  const { rows } = await sql<{ global_position: string; occurred_at: Date }>`
    select global_position, occurred_at from events where ${BELOW_HORIZON}
     order by transaction_id desc, global_position desc limit 1`.execute(db);
  const head = rows[0];
  return head && { id: String(head.global_position), at: new Date(head.occurred_at) };
}

export async function projectsCount(db: Db): Promise<number> {
  const row = await db.selectFrom('projects').select(sql<string>`count(*)`.as('count')).executeTakeFirst();
  return Number(row?.count ?? 0);
}

// ───────────────────────────── Statuses posted to the primary ─────────────────────────────

/** Statuses secondaries posted, of nodes that still exist, by node id. */
export async function storedStatuses(db: Db): Promise<{ geo_node_id: number; status: Record<string, unknown>; received_at: Date }[]> {
  return db
    .selectFrom('geo_node_statuses')
    .innerJoin('geo_nodes', 'geo_nodes.id', 'geo_node_statuses.geo_node_id')
    .select(['geo_node_statuses.geo_node_id', 'geo_node_statuses.status', 'geo_node_statuses.received_at'])
    .orderBy('geo_node_statuses.geo_node_id')
    .execute();
}

export async function storeStatus(db: Db, geoNodeId: number, status: Record<string, unknown>, receivedAt: Date): Promise<void> {
  await db
    .insertInto('geo_node_statuses')
    .values({ geo_node_id: geoNodeId, status: JSON.stringify(status), received_at: receivedAt.toISOString() })
    .onConflict((oc) => oc.column('geo_node_id').doUpdateSet({ status: JSON.stringify(status), received_at: receivedAt.toISOString() }))
    .execute();
}

// ───────────────────────────── A secondary's replication ─────────────────────────────

export const replicationCursor = (db: Db): Promise<GeoReplicationCursorRow | undefined> =>
  db.selectFrom('geo_replication_cursor').selectAll().where('id', '=', 1).executeTakeFirst();

export type FailureType = 'sync' | 'verification' | 'checksum_mismatch';

/** GitLab's Geo::ProjectRegistry.sync_failed / verification_failed / mismatch, over the events that failed. */
export function failuresQuery(db: Db, failureType: FailureType) {
  let query = db.selectFrom('geo_event_failures').selectAll();
  if (failureType === 'checksum_mismatch') query = query.where('checksum_mismatch', '=', true);
  else query = query.where('failure_type', '=', failureType);
  return query;
}

export async function openFailures(db: Db): Promise<GeoEventFailureRow[]> {
  return db.selectFrom('geo_event_failures').selectAll().orderBy('global_position').execute();
}
