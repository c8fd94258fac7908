import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { containerRepositoryEvents, type ContainerRepositoryEvent } from '../../domain/container-repositories/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: the API reads what the registry's notification just wrote. A repository's own
 * events are applied once (container_repositories_stream_versions); a project's deletion takes
 * its repositories and their tags with it (Projects::DestroyService), by an absolute condition.
 */
export const containerRepositoriesProjector: Projector = {
  name: 'container_repositories',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(containerRepositoryEvents), 'ProjectDeleted'],
  tables: ['container_repositories', 'container_repository_tags', 'container_repositories_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (ContainerRepositoryEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('container_repository_tags').where('project_id', '=', event.data.id).execute();
      await trx.deleteFrom('container_repositories').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'container_repositories_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id, project_id } = event.data;
    switch (event.type) {
      case 'ContainerRepositoryCreated':
        await trx
          .insertInto('container_repositories')
          .values({ id, project_id, name: event.data.name, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      case 'ContainerRepositoryTagPushed': {
        const { tag, digest, revision, total_size, created_at } = event.data;
        const row = { digest, revision, total_size, created_at };
        await trx
          .insertInto('container_repository_tags')
          .values({ repository_id: id, project_id, name: tag, ...row })
          .onConflict((oc) => oc.columns(['repository_id', 'name']).doUpdateSet(row))
          .execute();
        await trx.updateTable('container_repositories').set({ updated_at: at }).where('id', '=', id).execute();
        return;
      }
      case 'ContainerRepositoryTagDeleted':
        await trx.deleteFrom('container_repository_tags').where('repository_id', '=', id).where('name', '=', event.data.tag).execute();
        await trx.updateTable('container_repositories').set({ updated_at: at }).where('id', '=', id).execute();
        return;
      case 'ContainerRepositoryCleanupScheduled':
      case 'ContainerRepositoryDeletionScheduled':
        // Work for the reactor; nothing a reader sees changes until it is done.
        return;
      case 'ContainerRepositoryDeleted':
        await trx.deleteFrom('container_repository_tags').where('repository_id', '=', id).execute();
        await trx.deleteFrom('container_repositories').where('id', '=', id).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
