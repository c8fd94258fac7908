import type { Config } from '../../config.js';
import type { Db } from '../../database/database.js';
import type { AwardEmojiRow } from '../../projections/award-emoji/tables.js';
import { iso, toUserBasic, type UserReferenceRow } from './users.js';

/** The users of some awards, in one query. */
export async function awardUsers(db: Db, awards: readonly AwardEmojiRow[]): Promise<Map<number, UserReferenceRow>> {
  if (awards.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'name', 'username', 'state', 'avatar_url', 'email'])
    .where('id', 'in', [...new Set(awards.map((a) => a.user_id))])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** Entities::AwardEmoji (GitLab 12.10). */
export function toAwardEmoji(award: AwardEmojiRow, users: ReadonlyMap<number, UserReferenceRow>, config: Config) {
  const user = users.get(award.user_id);
  return {
    id: award.id,
    name: award.name,
    user: user ? toUserBasic(user, config) : null,
    created_at: iso(award.created_at),
    updated_at: iso(award.updated_at),
    awardable_id: Number(award.awardable_id),
    awardable_type: award.awardable_type,
  };
}
