import type { Db } from '../../database/database.js';
import type { CustomAttributeRow } from '../users.js';

/** A user's custom attributes in creation order (GitLab: by id). */
export function listCustomAttributes(db: Db, userId: number): Promise<CustomAttributeRow[]> {
  return db.selectFrom('user_custom_attributes').selectAll().where('user_id', '=', userId).orderBy('created_version').orderBy('key').execute();
}

export function findCustomAttribute(db: Db, userId: number, key: string): Promise<CustomAttributeRow | undefined> {
  return db.selectFrom('user_custom_attributes').selectAll().where('user_id', '=', userId).where('key', '=', key).executeTakeFirst();
}

/** Custom attributes of several users at once (with_custom_attributes on a list). */
export async function customAttributesByUser(db: Db, userIds: readonly number[]): Promise<Map<number, CustomAttributeRow[]>> {
  const byUser = new Map<number, CustomAttributeRow[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return byUser;
  const rows = await db
    .selectFrom('user_custom_attributes')
    .selectAll()
    .where('user_id', 'in', [...userIds])
    .orderBy('user_id')
    .orderBy('created_version')
    .orderBy('key')
    .execute();
  for (const row of rows) byUser.get(row.user_id)?.push(row);
  return byUser;
}
