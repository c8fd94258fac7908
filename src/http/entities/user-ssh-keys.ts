import type { Config } from '../../config.js';
import type { UserRow } from '../../projections/users.js';
import { toSshKey } from './deploy-keys.js';
import { toUserPublic } from './users.js';

/** Entities::SSHKeyWithUser (GET /keys/:id, GET /keys?fingerprint=): SSHKey and its owner as UserPublic, null for a deploy key nobody owns. */
export function toSshKeyWithUser(
  key: { id: number; title: string; key: string; created_at: Date },
  owner: UserRow | undefined,
  config: Config,
  viewer: Pick<UserRow, 'id' | 'is_admin'>,
) {
  return { ...toSshKey(key), user: owner ? toUserPublic(owner, config, { viewer }) : null };
}
