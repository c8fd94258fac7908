import type { Config } from '../../config.js';
import type { UserRow } from '../../projections/users.js';
import type { AccessRequestView } from '../../projections/members/access-requests.js';
import type { MemberView } from '../../projections/members/members.js';
import { iso, toUserBasic } from './users.js';

type UserFields = Pick<MemberView, 'id' | 'name' | 'username' | 'state' | 'avatar_url' | 'email'>;

const userBasic = (row: UserFields, config: Config) => toUserBasic(row as UserRow, config);

/** Entities::Member (GitLab 12): the user (UserBasic, merged), access_level, expires_at. */
export function toMember(row: MemberView, config: Config) {
  const out = userBasic(row, config);
  out.access_level = row.access_level;
  out.expires_at = row.expires_at;
  return out;
}

/**
 * Entities::AccessRequester: the user (UserBasic, merged) and requested_at; the spec's
 * access request record also names created_at (when the request was made).
 */
export function toAccessRequester(row: AccessRequestView, config: Config) {
  const out = userBasic(row, config);
  out.created_at = iso(row.requested_at);
  out.requested_at = iso(row.requested_at);
  return out;
}
