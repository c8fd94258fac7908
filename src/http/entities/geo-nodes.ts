import type { Config } from '../../config.js';
import type { GeoEventFailureRow, GeoNodeRow } from '../../projections/geo-nodes/tables.js';
import type { GeoNodeStatusFigures } from '../../projections/geo-nodes/status.js';

/** EE::API::Entities::GeoNode (GitLab 12.x). `current`: the node this instance is (its name). */
export function toGeoNode(row: GeoNodeRow, config: Config) {
  const api = `${config.externalUrl}/api/v4/geo_nodes/${row.id}`;
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    // GitLab's reader: the url when none is set.
    internal_url: row.internal_url ?? row.url,
    primary: row.primary,
    enabled: row.enabled,
    current: row.name === config.geo.nodeName,
    files_max_capacity: row.files_max_capacity,
    repos_max_capacity: row.repos_max_capacity,
    verification_max_capacity: row.verification_max_capacity,
    container_repositories_max_capacity: row.container_repositories_max_capacity,
    ...(row.primary ? {} : { sync_object_storage: row.sync_object_storage }),
    // GitLab: "Retained for backwards compatibility. Remove in API v5".
    clone_protocol: 'http',
    web_edit_url: `${config.externalUrl}/admin/geo/nodes/${row.id}/edit`,
    ...(row.primary ? {} : { web_geo_projects_url: `${row.url}admin/geo/projects` }),
    _links: { self: api, status: `${api}/status`, repair: `${api}/repair` },
  };
}

/** number_to_percentage(calc_percentage(total, count), precision: 2): 0 over nothing. */
const percentage = (count: number | null, total: number | null) => `${(total && count ? (count / total) * 100 : 0).toFixed(2)}%`;

/**
 * EE::API::Entities::GeoNodeStatus (GitLab 12.x), field for field and in its order; what
 * forgelog has none of (attachments, LFS objects, job artifacts, designs, wikis, `git fsck`)
 * is null, its percentage 0.00%. `wikis_count` and `repositories_count` are gone since 12.0.
 * Timestamps are GitLab's `to_i` of a time that may be nil: 0 then.
 */
export function toGeoNodeStatus(s: GeoNodeStatusFigures, config: Config, updatedAt: Date) {
  const none = { count: null, synced: null, failed: null };
  const replicable = (name: string, missingOnPrimary: boolean) => ({
    [`${name}_count`]: none.count,
    [`${name}_synced_count`]: none.synced,
    [`${name}_failed_count`]: none.failed,
    ...(missingOnPrimary ? { [`${name}_synced_missing_on_primary_count`]: null } : {}),
    [`${name}_synced_in_percentage`]: percentage(null, null),
  });
  const api = `${config.externalUrl}/api/v4/geo_nodes/${s.geo_node_id}`;
  const healthy = s.health === '';
  return {
    geo_node_id: s.geo_node_id,
    healthy,
    health: healthy ? 'Healthy' : s.health,
    health_status: healthy ? 'Healthy' : 'Unhealthy',
    missing_oauth_application: false,
    ...replicable('attachments', true),
    db_replication_lag_seconds: s.db_replication_lag_seconds,
    ...replicable('lfs_objects', true),
    ...replicable('job_artifacts', true),
    ...replicable('container_repositories', false),
    ...replicable('design_repositories', false),
    projects_count: s.projects_count,
    repositories_failed_count: s.repositories_failed_count,
    repositories_synced_count: s.repositories_synced_count,
    repositories_synced_in_percentage: percentage(s.repositories_synced_count, s.projects_count),
    wikis_failed_count: null,
    wikis_synced_count: null,
    wikis_synced_in_percentage: percentage(null, null),
    repository_verification_enabled: true,
    repositories_checksummed_count: s.repositories_checksummed_count,
    repositories_checksum_failed_count: s.repositories_checksum_failed_count,
    repositories_checksummed_in_percentage: percentage(s.repositories_checksummed_count, s.projects_count),
    wikis_checksummed_count: null,
    wikis_checksum_failed_count: null,
    wikis_checksummed_in_percentage: percentage(null, null),
    repositories_verification_failed_count: s.repositories_verification_failed_count,
    repositories_verified_count: s.repositories_verified_count,
    repositories_verified_in_percentage: percentage(s.repositories_verified_count, s.projects_count),
    repositories_checksum_mismatch_count: s.repositories_checksum_mismatch_count,
    wikis_verification_failed_count: null,
    wikis_verified_count: null,
    wikis_verified_in_percentage: percentage(null, null),
    wikis_checksum_mismatch_count: null,
    repositories_retrying_verification_count: s.repositories_retrying_verification_count,
    wikis_retrying_verification_count: null,
    replication_slots_count: s.replication_slots_count,
    replication_slots_used_count: s.replication_slots_used_count,
    replication_slots_used_in_percentage: percentage(s.replication_slots_used_count, s.replication_slots_count),
    replication_slots_max_retained_wal_bytes: null,
    repositories_checked_count: null,
    repositories_checked_failed_count: null,
    repositories_checked_in_percentage: percentage(null, null),
    last_event_id: s.last_event_id,
    last_event_timestamp: s.last_event_timestamp ?? 0,
    cursor_last_event_id: s.cursor_last_event_id,
    cursor_last_event_timestamp: s.cursor_last_event_timestamp ?? 0,
    last_successful_status_check_timestamp: s.last_successful_status_check_timestamp,
    version: s.version,
    revision: s.revision,
    selective_sync_type: null,
    namespaces: [],
    updated_at: updatedAt.toISOString(),
    storage_shards_match: true,
    _links: { self: `${api}/status`, node: api },
  };
}

/** GeoProjectRegistryEntity (GitLab 12.x): one failed event, as the registry of its project. */
export function toGeoFailure(row: GeoEventFailureRow) {
  const sync = row.failure_type === 'sync';
  return {
    project_id: row.project_id,
    last_repository_synced_at: row.last_failed_at.toISOString(),
    last_repository_successful_sync_at: null,
    last_wiki_synced_at: null,
    last_wiki_successful_sync_at: null,
    repository_retry_count: row.retry_count,
    wiki_retry_count: null,
    last_repository_sync_failure: sync ? row.message : null,
    last_wiki_sync_failure: null,
    last_repository_verification_failure: sync ? null : row.message,
    last_wiki_verification_failure: null,
    repository_verification_checksum_sha: row.event_hash,
    wiki_verification_checksum_sha: null,
    repository_checksum_mismatch: row.checksum_mismatch,
    wiki_checksum_mismatch: false,
  };
}
