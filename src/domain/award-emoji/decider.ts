import { type Decider, unhandled } from '../decider.js';
import { notFound, recordNotFound } from '../errors.js';
import type { AwardEmojiEvent, AwardableType } from './events.js';
import { EMOJI_NAMES } from './names.js';

/**
 * The awards on one awardable. The routes have found the awardable and asked `award_emoji`;
 * the decider holds GitLab's AwardEmoji validations: the name is one of Gitlab::Emoji's, and a
 * user awards a name once (`validates :name, uniqueness: { scope: [:user, :awardable_type,
 * :awardable_id] }`).
 */

export interface AwardRecord {
  readonly userId: number;
  readonly name: string;
}

export interface AwardsState {
  readonly key: string;
  readonly awards: ReadonlyMap<number, AwardRecord>;
}

interface AwardableData {
  readonly awardable_type: AwardableType;
  readonly awardable_id: number;
  readonly project_id: number | null;
  readonly group_id: number | null;
}

export type AwardEmojiCommand =
  | { readonly type: 'AwardEmoji'; readonly id: number; readonly awardable: AwardableData; readonly userId: number; readonly name: string }
  | { readonly type: 'RemoveAwardEmoji'; readonly id: number; readonly awardable: AwardableData };

const KNOWN = new Set(EMOJI_NAMES);
/** Gitlab::Emoji.emoji_exists? */
export const isEmojiName = (name: string) => KNOWN.has(name);

function evolve(state: AwardsState, event: AwardEmojiEvent): AwardsState {
  switch (event.type) {
    case 'AwardEmojiAwarded': {
      const awards = new Map(state.awards);
      awards.set(event.data.id, { userId: event.data.user_id, name: event.data.name });
      return { ...state, awards };
    }
    case 'AwardEmojiRemoved': {
      const awards = new Map(state.awards);
      awards.delete(event.data.id);
      return { ...state, awards };
    }
    default:
      return unhandled(event);
  }
}

function decide(command: AwardEmojiCommand, state: AwardsState): AwardEmojiEvent[] {
  switch (command.type) {
    case 'AwardEmoji': {
      // GitLab 12's API answers a failed AwardEmojis::AddService as `not_found!("Award Emoji #{message}")`.
      if (!isEmojiName(command.name)) throw notFound('Award Emoji Name is not included in the list');
      if ([...state.awards.values()].some((a) => a.userId === command.userId && a.name === command.name)) throw notFound('Award Emoji Name has already been taken');
      return [{ type: 'AwardEmojiAwarded', data: { id: command.id, ...command.awardable, user_id: command.userId, name: command.name } }];
    }
    case 'RemoveAwardEmoji':
      // `awardable.award_emoji.find(award_id)`.
      if (!state.awards.has(command.id)) throw recordNotFound('Award Emoji');
      return [{ type: 'AwardEmojiRemoved', data: { id: command.id, ...command.awardable } }];
    default:
      return unhandled(command);
  }
}

export const awardEmojiDecider: Decider<AwardEmojiCommand, AwardEmojiEvent, AwardsState, string> = {
  initialState: (key) => ({ key, awards: new Map() }),
  evolve,
  decide,
};
