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
 * Inline: a push answers with what it wrote. The branches of each repository; the objects
 * are not this projection's (the commands write them, and a rebuild must not lose them).
 */
export const repositoryProjector = defineProjector({
  name: 'repository',
  tables: ['repository_branches'],
  on: {
    BranchCreated: pointBranch,
    BranchUpdated: pointBranch,
    BranchDeleted: async ({ data }, trx) =>
      trx.deleteFrom('repository_branches').where('project_id', '=', data.project_id).where('name', '=', data.branch).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('repository_branches').where('project_id', '=', data.id).execute(),
  },
});
