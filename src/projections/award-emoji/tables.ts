import type { ColumnType, Selectable } from 'kysely';
import type { Timestamp } from '../../database/columns.js';
import type { AwardableType } from '../../domain/award-emoji/events.js';
import type { StreamVersionsTable } from '../stream-versions.js';

/** GitLab's `award_emoji`. `awardable_id` is bigint (a note's id): read as text. */
export interface AwardEmojiTable {
  id: number;
  name: string;
  user_id: number;
  awardable_type: AwardableType;
  awardable_id: ColumnType<string, number, never>;
  project_id: number | null;
  group_id: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AwardEmojiReadTables {
  award_emoji: AwardEmojiTable;
  award_emoji_stream_versions: StreamVersionsTable;
}

export type AwardEmojiRow = Selectable<AwardEmojiTable>;

declare module '../../database/database.js' {
  interface Database extends AwardEmojiReadTables {}
}
