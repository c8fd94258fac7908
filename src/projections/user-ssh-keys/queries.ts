import type { Db } from '../../database/database.js';

/** The columns every key view shows (Entities::SSHKey), and whose key it is. */
const KEY_COLUMNS = ['k.id', 'k.title', 'k.key', 'k.created_at', 'k.updated_at', 'k.user_id'] as const;

/** A user's keys (GitLab's `user.keys`), optionally one; the route orders and pages them. */
export function userSshKeysQuery(db: Db, userId: number, keyId?: number) {
  let query = db.selectFrom('user_ssh_keys as k').select(KEY_COLUMNS).where('k.user_id', '=', userId);
  if (keyId !== undefined) query = query.where('k.id', '=', keyId);
  return query;
}

export type UserSshKeyView = Awaited<ReturnType<ReturnType<typeof userSshKeysQuery>['executeTakeFirstOrThrow']>>;

/** Any key, a user's or a deploy key, as GitLab's `Key` reads its one table; `user_id` null for a deploy key nobody owns. */
export interface AnyKeyView {
  readonly id: number;
  readonly title: string;
  readonly key: string;
  readonly created_at: Date;
  readonly user_id: number | null;
}

/** Which key: by id (`Key.find`), or by fingerprint (KeysFinder: the MD5 `fingerprint` or the `fingerprint_sha256` column). */
export type KeyLookup = { readonly id: number } | { readonly column: 'fingerprint' | 'fingerprint_sha256'; readonly value: string };

/**
 * The keys of both kinds a lookup names, by id. A user key shows only while its user exists
 * (a deleted user's keys wait for their removal); `userKeysOnly` is KeysFinder's `key_type=ssh`.
 */
export async function findKeys(db: Db, lookup: KeyLookup | null, userKeysOnly = false): Promise<AnyKeyView[]> {
  let users = db.selectFrom('user_ssh_keys as k').innerJoin('users as u', 'u.id', 'k.user_id').select(['k.id', 'k.title', 'k.key', 'k.created_at', 'k.user_id']);
  let deploy = db.selectFrom('deploy_keys as k').select(['k.id', 'k.title', 'k.key', 'k.created_at', 'k.user_id']);
  if (lookup && 'id' in lookup) {
    users = users.where('k.id', '=', lookup.id);
    deploy = deploy.where('k.id', '=', lookup.id);
  } else if (lookup) {
    users = users.where(`k.${lookup.column}`, '=', lookup.value);
    deploy = deploy.where(`k.${lookup.column}`, '=', lookup.value);
  }
  const rows: AnyKeyView[] = [...(await users.orderBy('k.id').execute()), ...(userKeysOnly ? [] : await deploy.orderBy('k.id').execute())];
  return rows.sort((a, b) => a.id - b.id);
}

/** The keys of a user, for its removal: gone users' included. */
export async function sshKeyIdsOfUser(db: Db, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('user_ssh_keys').select('id').where('user_id', '=', userId).orderBy('id').execute();
  return rows.map((row) => row.id);
}
