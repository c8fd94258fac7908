import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { featureFlagEvents, type FeatureFlagEvent } from '../../domain/feature-flags/events.js';
import { DEFAULT_SCOPE } from '../../domain/feature-flags/rules.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: the API reads what it just wrote. A flag's own events are applied once
 * (feature_flags_stream_versions); a project's deletion takes its flags and their scopes with
 * it, by an absolute condition a replay finds nothing more to do for.
 */
export const featureFlagsProjector: Projector = {
  name: 'feature_flags',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(featureFlagEvents), 'ProjectDeleted'],
  tables: ['feature_flags', 'feature_flag_scopes', 'feature_flags_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (FeatureFlagEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('feature_flag_scopes').where('project_id', '=', event.data.id).execute();
      await trx.deleteFrom('feature_flags').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'feature_flags_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id, project_id } = event.data;
    switch (event.type) {
      case 'FeatureFlagCreated': {
        const { name, description, active, scopes } = event.data;
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
        return;
      }
      case 'FeatureFlagUpdated': {
        const { changes } = event.data;
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
        return;
      }
      case 'FeatureFlagDeleted':
        await trx.deleteFrom('feature_flag_scopes').where('feature_flag_id', '=', id).execute();
        await trx.deleteFrom('feature_flags').where('id', '=', id).execute();
        return;
      case 'FeatureFlagScopeCreated': {
        const { scope } = event.data;
        await trx
          .insertInto('feature_flag_scopes')
          .values({ ...scope, strategies: JSON.stringify(scope.strategies), feature_flag_id: id, project_id, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      }
      case 'FeatureFlagScopeUpdated': {
        const { active, strategies } = event.data.changes;
        await trx
          .updateTable('feature_flag_scopes')
          .set({
            ...(active !== undefined ? { active } : {}),
            ...(strategies !== undefined ? { strategies: JSON.stringify(strategies) } : {}),
            updated_at: at,
          })
          .where('id', '=', event.data.scope_id)
          .execute();
        return;
      }
      case 'FeatureFlagScopeDeleted':
        await trx.deleteFrom('feature_flag_scopes').where('id', '=', event.data.scope_id).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
