import type { Db } from '../../database/database.js';
import type { HookKind } from '../../domain/hooks/decider.js';
import type { HookRow } from './tables.js';

/** The hooks of one owner (a project, a group, or the instance's system hooks), by id. */
export function hooksOf(db: Db, kind: HookKind, ownerId: number | null) {
  let query = db.selectFrom('hooks').selectAll().where('kind', '=', kind);
  if (kind === 'project') query = query.where('project_id', '=', ownerId);
  if (kind === 'group') query = query.where('group_id', '=', ownerId);
  return query;
}

/** `<owner>.hooks.find(id)`: another owner's hook is not found. */
export const findHook = (db: Db, kind: HookKind, ownerId: number | null, id: number): Promise<HookRow | undefined> =>
  hooksOf(db, kind, ownerId).where('id', '=', id).executeTakeFirst();
