import { defineAggregate } from '../aggregate.js';
import { noteDecider } from './decider.js';
import { noteEventIndex, noteEvents, notesStreamId } from './events.js';

/**
 * The notes of one noteable (src/domain/notes/), keyed by `noteableKey`. A new note's id is a
 * number the log's positions never take (src/commands/notes.ts `newNoteId`), so that user
 * notes and the system notes derived from events share one id space.
 */
export const notes = defineAggregate({
  name: 'notes',
  streamId: notesStreamId,
  events: noteEvents,
  decider: noteDecider,
  index: noteEventIndex,
  idSequence: 'events_global_position_seq',
});
