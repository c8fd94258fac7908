import type { FeatureFlagRow, FeatureFlagScopeRow } from '../../projections/feature-flags/tables.js';

/** EE::API::Entities::FeatureFlag::Scope (GitLab 12): a feature flag spec. */
export const toFeatureFlagScope = (row: FeatureFlagScopeRow) => ({
  id: row.id,
  active: row.active,
  environment_scope: row.environment_scope,
  strategies: row.strategies,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/**
 * EE::API::Entities::FeatureFlag::DetailedScope: the scope in effect for an environment, with
 * its flag's name; `active` is the flag's and the scope's together (for_unleash_client).
 */
export const toDetailedFeatureFlagScope = (row: FeatureFlagScopeRow & { name: string; flag_active: boolean }) => ({
  ...toFeatureFlagScope(row),
  active: row.flag_active && row.active,
  name: row.name,
});

/** EE::API::Entities::FeatureFlag (GitLab 12): name, description, times and the scopes in creation order. */
export const toFeatureFlag = (row: FeatureFlagRow, scopes: readonly FeatureFlagScopeRow[]) => ({
  name: row.name,
  description: row.description,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  scopes: scopes.map(toFeatureFlagScope),
});
