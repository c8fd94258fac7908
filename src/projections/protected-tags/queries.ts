import type { Db } from '../../database/database.js';
import type { ProtectedRef } from '../../domain/repository/push-access.js';

/** The protected tags API's reads, and the rules the tag check matches a tag against. */

export const protectedTagsQuery = (db: Db, projectId: number) => db.selectFrom('protected_tags').selectAll().where('project_id', '=', projectId);

export const findProtectedTag = (db: Db, projectId: number, name: string) =>
  db.selectFrom('protected_tags').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();

/** The create access levels of some protected tags, per tag in their order. */
export async function createAccessLevelsOf(db: Db, tagIds: readonly number[]) {
  if (tagIds.length === 0) return [];
  return db
    .selectFrom('protected_tag_create_access_levels')
    .select(['protected_tag_id', 'access_level'])
    .where('protected_tag_id', 'in', [...tagIds])
    .orderBy('protected_tag_id')
    .orderBy('position')
    .execute();
}

/** A project's protected tags as the tag check matches them: each name with its create rules (kind `push`). */
export async function protectedTagRefsOf(db: Db, projectId: number): Promise<ProtectedRef[]> {
  const rows = await db
    .selectFrom('protected_tags as t')
    .leftJoin('protected_tag_create_access_levels as r', 'r.protected_tag_id', 't.id')
    .select(['t.id', 't.name', 'r.access_level'])
    .where('t.project_id', '=', projectId)
    .orderBy('t.id')
    .orderBy('r.position')
    .execute();
  const refs = new Map<number, { name: string; rules: ProtectedRef['rules'][number][] }>();
  for (const row of rows) {
    const ref = refs.get(row.id) ?? refs.set(row.id, { name: row.name, rules: [] }).get(row.id)!;
    if (row.access_level !== null) ref.rules.push({ kind: 'push', access_level: row.access_level, user_id: null, group_id: null });
  }
  return [...refs.values()];
}
