import { defineProjector } from '../projector.js';

/** Work for the reactor; nothing a reader sees changes until it is done. */
const scheduled = async () => {};

/**
 * Inline: the API reads what the registry's notification just wrote. A project's deletion takes
 * its repositories and their tags with it (Projects::DestroyService), by an absolute condition.
 */
export const containerRepositoriesProjector = defineProjector({
  name: 'container_repositories',
  tables: ['container_repositories', 'container_repository_tags'],
  on: {
    ContainerRepositoryCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('container_repositories')
        .values({ id: data.id, project_id: data.project_id, name: data.name, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    ContainerRepositoryTagPushed: async ({ data, occurredAt }, trx) => {
      const { id, project_id, tag, digest, revision, total_size, created_at } = data;
      const row = { digest, revision, total_size, created_at };
      await trx
        .insertInto('container_repository_tags')
        .values({ repository_id: id, project_id, name: tag, ...row })
        .onConflict((oc) => oc.columns(['repository_id', 'name']).doUpdateSet(row))
        .execute();
      await trx.updateTable('container_repositories').set({ updated_at: occurredAt.toISOString() }).where('id', '=', id).execute();
    },
    ContainerRepositoryTagDeleted: async ({ data, occurredAt }, trx) => {
      await trx.deleteFrom('container_repository_tags').where('repository_id', '=', data.id).where('name', '=', data.tag).execute();
      await trx.updateTable('container_repositories').set({ updated_at: occurredAt.toISOString() }).where('id', '=', data.id).execute();
    },
    ContainerRepositoryCleanupScheduled: scheduled,
    ContainerRepositoryDeletionScheduled: scheduled,
    ContainerRepositoryDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('container_repository_tags').where('repository_id', '=', data.id).execute();
      await trx.deleteFrom('container_repositories').where('id', '=', data.id).execute();
    },
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('container_repository_tags').where('project_id', '=', data.id).execute();
      await trx.deleteFrom('container_repositories').where('project_id', '=', data.id).execute();
    },
  },
});
