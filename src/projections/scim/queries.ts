import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { SamlProviderRow } from './tables.js';

/** A group by id or full path (GitLab's `find_group`), without regard to who asks. */
export function findGroupByIdOrPath(db: Db, idOrPath: string) {
  let query = db.selectFrom('namespaces').select(['id', 'full_path', 'parent_id']).where('kind', '=', 'group').where('pending_delete', '=', false);
  query = /^\d+$/.test(idOrPath) && Number(idOrPath) <= 2147483647 ? query.where('id', '=', Number(idOrPath)) : query.where(sql`lower(full_path)`, '=', idOrPath.toLowerCase());
  return query.executeTakeFirst();
}

export const findSamlProvider = (db: Db, groupId: number): Promise<SamlProviderRow | undefined> =>
  db.selectFrom('saml_providers').selectAll().where('group_id', '=', groupId).executeTakeFirst();

/** The group a SCIM token digest belongs to, if any. */
export async function scimTokenGroupId(db: Db, tokenDigest: string): Promise<number | undefined> {
  const row = await db.selectFrom('scim_oauth_access_tokens').select('group_id').where('token_digest', '=', tokenDigest).executeTakeFirst();
  return row?.group_id;
}

/** A group's identities with the users they link (a deleted user's identity is not one until it is unlinked), by id. */
export function groupIdentitiesQuery(db: Db, groupId: number) {
  return db
    .selectFrom('group_saml_identities as i')
    .innerJoin('users as u', 'u.id', 'i.user_id')
    .select(['i.id', 'i.extern_uid', 'i.user_id', 'u.name', 'u.username', 'u.email'])
    .where('i.group_id', '=', groupId);
}

export type GroupIdentityRow = Awaited<ReturnType<ReturnType<typeof groupIdentitiesQuery>['executeTakeFirstOrThrow']>>;

/** One identity of the group by extern_uid, case-insensitively (`Identity.with_extern_uid`). */
export const findGroupIdentity = (db: Db, groupId: number, externUid: string) =>
  groupIdentitiesQuery(db, groupId).where(sql`lower(i.extern_uid)`, '=', externUid.toLowerCase()).executeTakeFirst();

/** The identities of a user, in every group (a deleted user's are unlinked by a reactor). */
export const identitiesOfUser = (db: Db, userId: number) =>
  db.selectFrom('group_saml_identities').select(['group_id', 'extern_uid']).where('user_id', '=', userId).orderBy('id').execute();

/** The user a SCIM `userName eq` filter names: by username, or else by email (`User.find_by_username || find_by_any_email`). */
export async function userIdForUserName(db: Db, userName: string): Promise<number | undefined> {
  const byUsername = await db.selectFrom('users').select('id').where(sql`lower(username)`, '=', userName.toLowerCase()).executeTakeFirst();
  if (byUsername) return byUsername.id;
  const byEmail = await db.selectFrom('users').select('id').where(sql`lower(email)`, '=', userName.toLowerCase()).executeTakeFirst();
  return byEmail?.id;
}

/** Whether a namespace path (a username or a group path) is taken, as the claims hold it. */
export async function namespacePathTaken(db: Db, path: string): Promise<boolean> {
  const row = await db.selectFrom('claims').select('key').where('kind', '=', 'namespace_path').where('key', '=', path.toLowerCase()).executeTakeFirst();
  return row !== undefined;
}
