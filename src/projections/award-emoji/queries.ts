import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { AwardableType } from '../../domain/award-emoji/events.js';
import type { AwardEmojiRow } from './tables.js';

/** The reads the award emoji routes and the awardables' entities run. */

const ofAwardable = (db: Db, type: AwardableType, id: number) =>
  db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', type).where('awardable_id', '=', String(id));

/** An awardable's awards, oldest first (`awardable.award_emoji`). */
export const awardsOf = (db: Db, type: AwardableType, id: number): Promise<AwardEmojiRow[]> => ofAwardable(db, type, id).orderBy('id').execute();

/** One award of an awardable (`awardable.award_emoji.find(award_id)`). */
export const findAward = (db: Db, type: AwardableType, awardableId: number, id: number): Promise<AwardEmojiRow | undefined> =>
  ofAwardable(db, type, awardableId).where('id', '=', id).executeTakeFirst();

export interface Votes {
  readonly upvotes: number;
  readonly downvotes: number;
}

/** `upvotes` and `downvotes` (the thumbsup and thumbsdown awards) of some awardables of a type, as one statement. */
export const votesQuery = (db: Db, type: AwardableType, ids: readonly number[]) =>
  sql<{ awardable_id: string; upvotes: string; downvotes: string }>`
    select awardable_id, count(*) filter (where name = 'thumbsup') as upvotes, count(*) filter (where name = 'thumbsdown') as downvotes
    from award_emoji
    where awardable_type = ${type} and awardable_id = any(${ids.map(String)}::bigint[]) and name in ('thumbsup', 'thumbsdown')
    group by awardable_id`.compile(db);
