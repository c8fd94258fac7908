import { defineAggregate } from '../aggregate.js';
import { awardEmojiDecider } from './decider.js';
import { awardEmojiEventIndex, awardEmojiEvents, awardEmojiStreamId } from './events.js';

/** The award emoji on one awardable (src/domain/award-emoji/), keyed by `awardableKey`. */
export const awardEmoji = defineAggregate({
  name: 'award_emoji',
  streamId: awardEmojiStreamId,
  events: awardEmojiEvents,
  decider: awardEmojiDecider,
  index: awardEmojiEventIndex,
  idSequence: 'award_emoji_id_seq',
});
