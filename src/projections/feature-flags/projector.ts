import { DEFAULT_SCOPE } from '../../domain/feature-flags/rules.js';
import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A project's deletion takes its flags and their
 * scopes with it, by an absolute condition a replay finds nothing more to do for.
 */
export const featureFlagsProjector = defineProjector({
  name: 'feature_flags',
  tables: ['feature_flags', 'feature_flag_scopes'],
  on: {
    FeatureFlagCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { id, project_id, name, description, active, scopes } = data;
      await trx
        .insertInto('feature_flags')
        .values({ id, project_id, name, description, active, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await trx
        .insertInto('feature_flag_scopes')
        .values(scopes.map((s) => ({ ...s, strategies: JSON.stringify(s.strategies), feature_flag_id: id, project_id, created_at: at, updated_at: at })))
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    FeatureFlagUpdated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { id, changes } = data;
      await trx
        .updateTable('feature_flags')
        .set({ ...changes, updated_at: at })
        .where('id', '=', id)
        .execute();
      // Operations::FeatureFlag#update_default_scope.
      if (changes.active !== undefined) {
        await trx
          .updateTable('feature_flag_scopes')
          .set({ active: changes.active, updated_at: at })
          .where('feature_flag_id', '=', id)
          .where('environment_scope', '=', DEFAULT_SCOPE)
          .where('active', '!=', changes.active)
          .execute();
      }
    },
    FeatureFlagDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('feature_flag_scopes').where('feature_flag_id', '=', data.id).execute();
      await trx.deleteFrom('feature_flags').where('id', '=', data.id).execute();
    },
    FeatureFlagScopeCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { id, project_id, scope } = data;
      await trx
        .insertInto('feature_flag_scopes')
        .values({ ...scope, strategies: JSON.stringify(scope.strategies), feature_flag_id: id, project_id, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    FeatureFlagScopeUpdated: async ({ data, occurredAt }, trx) => {
      const { active, strategies } = data.changes;
      await trx
        .updateTable('feature_flag_scopes')
        .set({
          ...(active !== undefined ? { active } : {}),
          ...(strategies !== undefined ? { strategies: JSON.stringify(strategies) } : {}),
          updated_at: occurredAt.toISOString(),
        })
        .where('id', '=', data.scope_id)
        .execute();
    },
    FeatureFlagScopeDeleted: async ({ data }, trx) => trx.deleteFrom('feature_flag_scopes').where('id', '=', data.scope_id).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('feature_flag_scopes').where('project_id', '=', data.id).execute();
      await trx.deleteFrom('feature_flags').where('project_id', '=', data.id).execute();
    },
  },
});
