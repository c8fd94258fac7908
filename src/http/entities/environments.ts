import type { EnvironmentRow } from '../../projections/environments/tables.js';

/** Entities::EnvironmentBasic and the state Entities::Environment adds (GitLab 12): what lists show. */
export const toEnvironment = (row: EnvironmentRow) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  external_url: row.external_url,
  state: row.state,
});

/**
 * One environment (GET …/environments/:environment_id): with `last_deployment`, null while
 * the environment has no deployment (forgelog records none yet).
 */
export const toEnvironmentWithLastDeployment = (row: EnvironmentRow) => {
  const { state, ...basic } = toEnvironment(row);
  return { ...basic, last_deployment: null, state };
};
