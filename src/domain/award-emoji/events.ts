import { z } from 'zod';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';

/**
 * Award emoji (GitLab's `AwardEmoji`): a user's emoji on an awardable — a merge request, a
 * note, an epic, and (wired by their areas) an issue or a snippet. One aggregate per
 * awardable, stream `award-emoji-<awardable key>`, so "one award of a name per user" is
 * decided on one stream.
 */

export const AWARDABLE_TYPES = ['MergeRequest', 'Note', 'Epic', 'Issue', 'Snippet'] as const;
export type AwardableType = (typeof AWARDABLE_TYPES)[number];

const ofAward = {
  id: z.int(),
  awardable_type: z.enum(AWARDABLE_TYPES),
  awardable_id: z.int(),
  project_id: z.int().nullable(),
  group_id: z.int().nullable(),
};

export const awardEmojiEvents = {
  AwardEmojiAwarded: z.strictObject({ ...ofAward, user_id: z.int(), name: z.string() }),
  AwardEmojiRemoved: z.strictObject(ofAward),
} satisfies EventSchemas;

export type AwardEmojiEvent = EventOf<typeof awardEmojiEvents>;

export interface AwardableRef {
  readonly type: AwardableType;
  readonly id: number;
}

export const awardableKey = (ref: AwardableRef) => `${ref.type.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()}-${ref.id}`;
export const awardEmojiStreamId = (key: string) => `award-emoji-${key}`;

export const awardEmojiEventIndex = (event: AwardEmojiEvent): FeedIndex => ({
  projectId: event.data.project_id,
  groupId: event.data.group_id,
  targetType: 'AwardEmoji',
  targetId: event.data.id,
});
