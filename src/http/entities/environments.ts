import type { EnvironmentRow } from '../../projections/environments/tables.js';

/**
 * Entities::Environment (GitLab 12): EnvironmentBasic's fields, the project
 * (Entities::BasicProjectDetails, the same object for every environment of a page) and the
 * state.
 */
export const toEnvironment = (row: Pick<EnvironmentRow, 'id' | 'name' | 'slug' | 'external_url' | 'state'>, project: Record<string, unknown>) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  external_url: row.external_url,
  project,
  state: row.state,
});

/**
 * One environment (GET …/environments/:environment_id), which GitLab presents without the
 * project and with `last_deployment`: null while the environment has no deployment
 * (forgelog records none yet).
 */
export const toEnvironmentWithLastDeployment = (row: EnvironmentRow) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  external_url: row.external_url,
  last_deployment: null,
  state: row.state,
});
