import { z } from 'zod';
import type { Db } from '../../database/database.js';
import { logHead, openFailures, projectsCount, replicationCursor } from './queries.js';
import type { GeoNodeRow } from './tables.js';

const count = z.int().min(0).nullable();
const position = z.int().min(0).nullable();

/**
 * A node's status as forgelog measures it (GitLab's GeoNodeStatus#load_data_from_current_node),
 * before presentation: counts and positions, null where a figure does not apply. Positions
 * are the primary's global positions; times are epoch seconds. A secondary posts this to its
 * primary (POST /geo/status), which checks it against this schema.
 */
export const geoNodeStatusFigures = z.strictObject({
  geo_node_id: z.int(),
  /** '' when healthy, else why not. */
  health: z.string().max(1000),
  db_replication_lag_seconds: count,
  projects_count: z.int().min(0),
  repositories_synced_count: count,
  repositories_failed_count: count,
  repositories_verified_count: count,
  repositories_verification_failed_count: count,
  repositories_checksum_mismatch_count: count,
  repositories_retrying_verification_count: count,
  repositories_checksummed_count: count,
  repositories_checksum_failed_count: count,
  replication_slots_count: count,
  replication_slots_used_count: count,
  last_event_id: position,
  last_event_timestamp: position,
  cursor_last_event_id: position,
  cursor_last_event_timestamp: position,
  last_successful_status_check_timestamp: z.int().min(0),
  version: z.string().max(100),
  revision: z.string().max(100),
});
export type GeoNodeStatusFigures = z.infer<typeof geoNodeStatusFigures>;

const epochSeconds = (date: Date | null | undefined) => (date ? Math.floor(date.getTime() / 1000) : null);

export interface MeasureOptions {
  readonly now: Date;
  readonly version: string;
  readonly revision: string;
}

/**
 * The primary measuring itself: its log's head, its projects; every repository is its own
 * (checksummed by the event hashes), and each secondary node is a replication slot, used
 * once it has reported.
 */
export async function measurePrimary(db: Db, node: GeoNodeRow, options: MeasureOptions): Promise<GeoNodeStatusFigures> {
  const [head, projects, secondaries] = await Promise.all([
    logHead(db),
    projectsCount(db),
    db
      .selectFrom('geo_nodes')
      .leftJoin('geo_node_statuses', 'geo_node_statuses.geo_node_id', 'geo_nodes.id')
      .select(['geo_nodes.id', 'geo_node_statuses.geo_node_id as reported'])
      .where('geo_nodes.primary', '=', false)
      .execute(),
  ]);
  return {
    geo_node_id: node.id,
    health: '',
    db_replication_lag_seconds: null,
    projects_count: projects,
    repositories_synced_count: null,
    repositories_failed_count: null,
    repositories_verified_count: null,
    repositories_verification_failed_count: null,
    repositories_checksum_mismatch_count: null,
    repositories_retrying_verification_count: null,
    repositories_checksummed_count: projects,
    repositories_checksum_failed_count: 0,
    replication_slots_count: secondaries.length,
    replication_slots_used_count: secondaries.filter((s) => s.reported !== null).length,
    last_event_id: head ? Number(head.id) : null,
    last_event_timestamp: epochSeconds(head?.at),
    cursor_last_event_id: null,
    cursor_last_event_timestamp: null,
    last_successful_status_check_timestamp: epochSeconds(options.now)!,
    version: options.version,
    revision: options.revision,
  };
}

/**
 * A secondary measuring itself: the primary's head as last seen, its own applied position,
 * its projects (its read tables), and the events it could not apply: a project with an
 * event that failed is a failed repository, a hash that did not verify a verification
 * failure (and a checksum mismatch when the event's own hash was wrong).
 */
export async function measureSecondary(db: Db, node: GeoNodeRow, options: MeasureOptions): Promise<GeoNodeStatusFigures> {
  const [cursor, projects, failures] = await Promise.all([replicationCursor(db), projectsCount(db), openFailures(db)]);
  const headAt = cursor?.primary_last_event_at ?? null;
  const appliedAt = cursor?.last_event_at ?? null;
  const headId = cursor?.primary_last_event_id ?? null;
  const appliedId = cursor?.last_event_id ?? null;
  const caughtUp = headId !== null && appliedId === headId;
  let lag: number | null = null;
  if (caughtUp) lag = 0;
  else if (headAt !== null && appliedAt !== null) lag = Math.max(0, epochSeconds(headAt)! - epochSeconds(appliedAt)!);
  const failedProjects = new Set(failures.filter((f) => f.project_id !== null).map((f) => f.project_id)).size;
  const verification = failures.filter((f) => f.failure_type === 'verification');
  const first = failures[0];
  const health = cursor?.poll_error
    ? cursor.poll_error
    : first
      ? `Could not apply event ${first.global_position} (${first.event_type}): ${first.message}`
      : cursor
        ? ''
        : 'The secondary has not reached the primary yet';
  return {
    geo_node_id: node.id,
    health,
    db_replication_lag_seconds: lag,
    projects_count: projects,
    repositories_synced_count: Math.max(0, projects - failedProjects),
    repositories_failed_count: failedProjects,
    repositories_verified_count: Math.max(0, projects - new Set(verification.map((f) => f.project_id)).size),
    repositories_verification_failed_count: verification.length,
    repositories_checksum_mismatch_count: failures.filter((f) => f.checksum_mismatch).length,
    repositories_retrying_verification_count: verification.filter((f) => f.retry_count > 1).length,
    repositories_checksummed_count: null,
    repositories_checksum_failed_count: null,
    replication_slots_count: null,
    replication_slots_used_count: null,
    last_event_id: headId === null ? null : Number(headId),
    last_event_timestamp: epochSeconds(headAt),
    cursor_last_event_id: appliedId === null ? null : Number(appliedId),
    cursor_last_event_timestamp: epochSeconds(appliedAt),
    last_successful_status_check_timestamp: epochSeconds(options.now)!,
    version: options.version,
    revision: options.revision,
  };
}
