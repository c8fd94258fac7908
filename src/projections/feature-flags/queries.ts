import type { Db } from '../../database/database.js';
import type { FeatureFlagRow, FeatureFlagScopeRow } from './tables.js';

/**
 * FeatureFlagsFinder: a project's flags, `enabled` (with an active scope) or `disabled`
 * (without); the caller orders (by name) and pages it.
 */
export function featureFlagsQuery(db: Db, projectId: number, scope?: 'enabled' | 'disabled') {
  let query = db.selectFrom('feature_flags').selectAll().where('project_id', '=', projectId);
  if (scope !== undefined) {
    const active = (eb: any) =>
      eb.exists(eb.selectFrom('feature_flag_scopes as s').select('s.id').whereRef('s.feature_flag_id', '=', 'feature_flags.id').where('s.active', '=', true));
    query = query.where((eb) => (scope === 'enabled' ? active(eb) : eb.not(active(eb))));
  }
  return query;
}

/** `user_project.operations_feature_flags.find_by_name!(name)`. */
export const findFeatureFlag = (db: Db, projectId: number, name: string): Promise<FeatureFlagRow | undefined> =>
  db.selectFrom('feature_flags').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();

/** The scopes of some flags, each flag's in creation order. */
export async function scopesOf(db: Db, flagIds: readonly number[]): Promise<Map<number, FeatureFlagScopeRow[]>> {
  const byFlag = new Map<number, FeatureFlagScopeRow[]>(flagIds.map((id) => [id, []]));
  if (flagIds.length === 0) return byFlag;
  const rows = await db.selectFrom('feature_flag_scopes').selectAll().where('feature_flag_id', 'in', flagIds).orderBy('id').execute();
  for (const row of rows) byFlag.get(row.feature_flag_id)?.push(row);
  return byFlag;
}

/** A flag's scopes, to page (`paginate(feature_flag.scopes)`, by id). */
export const flagScopesQuery = (db: Db, flagId: number) => db.selectFrom('feature_flag_scopes').selectAll().where('feature_flag_id', '=', flagId);

/** Every scope of a project's flags, with each flag's name and `active`, newest flag first. */
export const projectScopes = (db: Db, projectId: number) =>
  db
    .selectFrom('feature_flag_scopes as s')
    .innerJoin('feature_flags as f', 'f.id', 's.feature_flag_id')
    .selectAll('s')
    .select(['f.name', 'f.active as flag_active'])
    .where('f.project_id', '=', projectId)
    .orderBy('f.id', 'desc')
    .orderBy('s.id')
    .execute();
