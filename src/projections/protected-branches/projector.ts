import { ACCESS_KINDS } from '../../domain/protected-branches.js';
import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A project's deletion removes its protected
 * branches, a user's or group's deletion the rules naming them (GitLab's foreign keys
 * cascade), by absolute conditions.
 */
export const protectedBranchesProjector = defineProjector({
  name: 'protected_branches',
  tables: ['protected_branches', 'protected_branch_access_levels'],
  on: {
    ProtectedBranchCreated: async ({ data: d, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('protected_branches')
        .values({ id: d.id, project_id: d.project_id, name: d.name, code_owner_approval_required: d.code_owner_approval_required, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const rules = ACCESS_KINDS.flatMap((kind) => d[`${kind}_access_levels`].map((rule, position) => ({ protected_branch_id: d.id, kind, position, ...rule })));
      if (rules.length > 0) {
        await trx
          .insertInto('protected_branch_access_levels')
          .values(rules)
          .onConflict((oc) => oc.columns(['protected_branch_id', 'kind', 'position']).doNothing())
          .execute();
      }
    },
    ProtectedBranchUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('protected_branches')
        .set({ code_owner_approval_required: data.code_owner_approval_required, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    ProtectedBranchDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('protected_branch_access_levels').where('protected_branch_id', '=', data.id).execute();
      await trx.deleteFrom('protected_branches').where('id', '=', data.id).execute();
    },
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      const ofProject = trx.selectFrom('protected_branches').select('id').where('project_id', '=', data.id);
      await trx.deleteFrom('protected_branch_access_levels').where('protected_branch_id', 'in', ofProject).execute();
      await trx.deleteFrom('protected_branches').where('project_id', '=', data.id).execute();
    },
    UserDeleted: async ({ data }, trx) => trx.deleteFrom('protected_branch_access_levels').where('user_id', '=', data.id).execute(),
    GroupDeleted: async ({ data }, trx) => trx.deleteFrom('protected_branch_access_levels').where('group_id', '=', data.id).execute(),
  },
});
