import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { ContainerRepositoryTagRow } from './tables.js';

/** A repository with its project's path, which its own path is made of (ContainerRepository#path). */
export interface ContainerRepositoryRow {
  readonly id: number;
  readonly project_id: number;
  readonly name: string;
  readonly created_at: Date;
  /** `<project full path>[/<name>]`, lower-case. */
  readonly path: string;
}

function repositories(db: Db) {
  return db
    .selectFrom('container_repositories as r')
    .innerJoin('projects as p', 'p.id', 'r.project_id')
    .select(['r.id', 'r.project_id', 'r.name', 'r.created_at'])
    .select(sql<string>`lower(case when r.name = '' then p.path_with_namespace else p.path_with_namespace || '/' || r.name end)`.as('path'));
}

/** A project's repositories (`project.container_repositories`), for the caller to page. */
export const projectRepositoriesQuery = (db: Db, projectId: number) => repositories(db).where('r.project_id', '=', projectId);

/**
 * ContainerRepository.for_group_and_its_subgroups (GitLab 12): the repositories of the
 * projects in the group and its subgroups whose container registry is enabled.
 */
export const groupRepositoriesQuery = (db: Db, groupId: number) =>
  repositories(db)
    .where('p.container_registry_enabled', '=', true)
    .where('p.pending_delete', '=', false)
    .where(sql<boolean>`p.traversal_ids && array[${groupId}]::integer[]`);

/** `user_project.container_repositories.find(id)`. */
export const findProjectRepository = (db: Db, projectId: number, id: number): Promise<ContainerRepositoryRow | undefined> =>
  projectRepositoriesQuery(db, projectId).where('r.id', '=', id).executeTakeFirst();

/** Tags of the given repositories, by name as the registry lists them (`manifest['tags'].sort`). */
export async function tagsOf(db: Db, repositoryIds: readonly number[]): Promise<ContainerRepositoryTagRow[]> {
  if (repositoryIds.length === 0) return [];
  return db.selectFrom('container_repository_tags').selectAll().where('repository_id', 'in', repositoryIds).orderBy('repository_id').orderBy(sql`name collate "C"`).execute();
}

/** A repository's tags as a query, for the caller to page. */
export const repositoryTagsQuery = (db: Db, repositoryId: number) => db.selectFrom('container_repository_tags').selectAll().where('repository_id', '=', repositoryId);

export const findTag = (db: Db, repositoryId: number, name: string): Promise<ContainerRepositoryTagRow | undefined> =>
  db.selectFrom('container_repository_tags').selectAll().where('repository_id', '=', repositoryId).where('name', '=', name).executeTakeFirst();
