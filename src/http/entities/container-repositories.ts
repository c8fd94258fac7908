import type { ContainerRepositoryRow } from '../../projections/container-repositories/queries.js';
import type { ContainerRepositoryTagRow } from '../../projections/container-repositories/tables.js';

/**
 * Entities::ContainerRegistry (GitLab 12): Repository, Tag and TagDetails. A location is
 * `File.join(registry host_port, path)`; a tag's path and location add `:<tag>`.
 */

const location = (host: string, path: string) => `${host}/${path}`;

/** Entities::ContainerRegistry::Tag. */
export const toTag = (host: string, repository: Pick<ContainerRepositoryRow, 'path'>, tag: Pick<ContainerRepositoryTagRow, 'name'>) => ({
  name: tag.name,
  path: `${repository.path}:${tag.name}`,
  location: `${location(host, repository.path)}:${tag.name}`,
});

/** Entities::ContainerRegistry::Repository; `tags` only when asked for (`tags: true`). */
export const toRepository = (host: string, row: ContainerRepositoryRow, tags?: readonly ContainerRepositoryTagRow[]) => ({
  id: row.id,
  name: row.name,
  path: row.path,
  project_id: row.project_id,
  location: location(host, row.path),
  created_at: row.created_at,
  ...(tags ? { tags: tags.map((tag) => toTag(host, row, tag)) } : {}),
});

/** Entities::ContainerRegistry::TagDetails: short_revision is `revision[0..8]`, nine characters. */
export const toTagDetails = (host: string, repository: ContainerRepositoryRow, tag: ContainerRepositoryTagRow) => ({
  ...toTag(host, repository, tag),
  revision: tag.revision,
  short_revision: tag.revision === null ? null : tag.revision.slice(0, 9),
  digest: tag.digest,
  created_at: tag.created_at,
  total_size: tag.total_size === null ? null : Number(tag.total_size),
});
