import { defineProjector } from '../projector.js';

/**
 * Inline: the deploy keys API reads what it just wrote. A deleted project takes its links along
 * by an absolute condition, and its keys stay (GitLab deletes the links without their callbacks).
 */
export const deployKeysProjector = defineProjector({
  name: 'deploy_keys',
  tables: ['deploy_keys', 'deploy_keys_projects'],
  on: {
    DeployKeyCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('deploy_keys')
        .values({ ...data, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    DeployKeyTitleChanged: async ({ data, occurredAt }, trx) =>
      trx.updateTable('deploy_keys').set({ title: data.title, updated_at: occurredAt.toISOString() }).where('id', '=', data.id).execute(),
    DeployKeyLinked: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('deploy_keys_projects')
        .values({ deploy_key_id: data.id, project_id: data.project_id, can_push: data.can_push, created_at: at, updated_at: at })
        .onConflict((oc) => oc.columns(['deploy_key_id', 'project_id']).doNothing())
        .execute();
    },
    DeployKeyLinkUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('deploy_keys_projects')
        .set({ can_push: data.can_push, updated_at: occurredAt.toISOString() })
        .where('deploy_key_id', '=', data.id)
        .where('project_id', '=', data.project_id)
        .execute(),
    DeployKeyUnlinked: async ({ data }, trx) =>
      trx.deleteFrom('deploy_keys_projects').where('deploy_key_id', '=', data.id).where('project_id', '=', data.project_id).execute(),
    DeployKeyDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('deploy_keys_projects').where('deploy_key_id', '=', data.id).execute();
      await trx.deleteFrom('deploy_keys').where('id', '=', data.id).execute();
    },
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('deploy_keys_projects').where('project_id', '=', data.id).execute(),
  },
});
