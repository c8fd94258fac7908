import type { Db } from '../../database/database.js';
import type { EnvironmentRow } from './tables.js';

export interface EnvironmentFilters {
  /** Exact name (EnvironmentsFinder#by_name). */
  readonly name?: string | undefined;
  /** A case-insensitive name prefix (Environment.for_name_like). */
  readonly search?: string | undefined;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** A project's environments, filtered; the caller orders and pages it. */
export function environmentsQuery(db: Db, projectId: number, filters: EnvironmentFilters = {}) {
  let query = db.selectFrom('environments').selectAll().where('project_id', '=', projectId);
  if (filters.name !== undefined) query = query.where('name', '=', filters.name);
  if (filters.search !== undefined) query = query.where('name', 'ilike', `${escapeLike(filters.search)}%`);
  return query;
}

/** One environment of a project (`project.environments.find(id)`). */
export const findEnvironment = (db: Db, projectId: number, id: number): Promise<EnvironmentRow | undefined> =>
  db.selectFrom('environments').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
