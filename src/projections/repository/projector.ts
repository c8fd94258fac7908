import type { Db } from '../../database/database.js';
import { defineProjector, type Projected } from '../projector.js';

/** A push that leaves the branch at `new_sha`, whether it made the branch or moved it. */
async function pointBranch({ data, occurredAt }: Projected<'BranchCreated' | 'BranchUpdated'>, trx: Db) {
  const at = occurredAt.toISOString();
  await trx
    .insertInto('repository_branches')
    .values({ project_id: data.project_id, name: data.branch, sha: data.new_sha, updated_at: at })
    .onConflict((oc) => oc.columns(['project_id', 'name']).doUpdateSet({ sha: data.new_sha, updated_at: at }))
    .execute();
}

/**
 * Inline: a push answers with what it wrote. The branches and tags of each repository; the objects
 * are not this projection's (the commands write them, and a rebuild must not lose them).
 */
export const repositoryProjector = defineProjector({
  name: 'repository',
  tables: ['repository_branches', 'repository_tags'],
  on: {
    BranchCreated: pointBranch,
    BranchUpdated: pointBranch,
    BranchDeleted: async ({ data }, trx) =>
      trx.deleteFrom('repository_branches').where('project_id', '=', data.project_id).where('name', '=', data.branch).execute(),
    TagCreated: async ({ data, occurredAt }, trx) =>
      trx
        .insertInto('repository_tags')
        .values({
          project_id: data.project_id,
          name: data.tag,
          target: data.target,
          commit_sha: data.commit_sha,
          message: data.message,
          release_description: data.release_description,
          created_at: occurredAt.toISOString(),
        })
        .onConflict((oc) => oc.columns(['project_id', 'name']).doNothing())
        .execute(),
    TagDeleted: async ({ data }, trx) => trx.deleteFrom('repository_tags').where('project_id', '=', data.project_id).where('name', '=', data.tag).execute(),
    TagReleaseSaved: async ({ data }, trx) =>
      trx.updateTable('repository_tags').set({ release_description: data.description }).where('project_id', '=', data.project_id).where('name', '=', data.tag).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('repository_branches').where('project_id', '=', data.id).execute();
      await trx.deleteFrom('repository_tags').where('project_id', '=', data.id).execute();
    },
  },
});
