import { describe, it } from 'vitest';
import { noteDecider, type CopiedNote, type NoteCommand } from '../../src/domain/notes/decider.js';
import { noteableKey, type NoteEvent } from '../../src/domain/notes/events.js';
import { deciderSpec, rejected } from '../support/decider.js';

// Issues::MoveService's copies of a moved issue's notes (NoteCopied): given / when / then.

const ISSUE = { noteable_type: 'Issue' as const, noteable_id: 41, commit_id: null, project_id: 8, group_id: null };
const KEY = noteableKey(ISSUE);
const D1 = '1'.repeat(40);
const D2 = '2'.repeat(40);
const AT = '2020-01-01T00:00:00.000Z';
const LATER = '2020-01-02T00:00:00.000Z';

const copy = (id: number, system: boolean, type: CopiedNote['type'], discussionId: string): CopiedNote => ({ id, copiedFromId: id - 5, authorId: 9, body: `note ${id}`, system, type, discussionId, createdAt: AT, updatedAt: LATER });
const copied = (n: CopiedNote): NoteEvent => ({
  type: 'NoteCopied',
  data: { id: n.id, ...ISSUE, copied_from_id: n.copiedFromId, author_id: n.authorId, body: n.body, system: n.system, type: n.type, discussion_id: n.discussionId, created_at: n.createdAt, updated_at: n.updatedAt },
});
const reply = (id: number, discussionId: string): NoteCommand => ({ type: 'ReplyToDiscussion', id, noteable: ISSUE, noteableIid: 3, noteableTitle: 'Moved', authorId: 9, body: 'again', discussionId, createdAt: LATER });

describe('copying a moved issue\'s notes', () => {
  const { on } = deciderSpec(noteDecider);
  const notes = [copy(10, true, null, D1), copy(20, false, 'DiscussionNote', D2), copy(30, false, 'DiscussionNote', D2)];

  it('copies each note as it was, in order', () => {
    on(KEY).given().when({ type: 'CopyNotes', noteable: ISSUE, notes }).then(notes.map(copied));
  });

  it('a copied discussion takes replies; a copied system note is no note of the stream to reply to or edit', () => {
    const added: NoteEvent = {
      type: 'NoteAdded',
      data: { id: 40, ...ISSUE, author_id: 9, body: 'again', type: 'DiscussionNote', discussion_id: D2, position: null, line_code: null, noteable_iid: 3, noteable_title: 'Moved', created_at: LATER, resolved: false },
    };
    on(KEY).given(...notes.map(copied)).when(reply(40, D2)).then([added]);
    on(KEY).given(...notes.map(copied)).when(reply(40, D1)).then(rejected('not_found', { subject: 'Discussion' }));
    on(KEY).given(...notes.map(copied)).when({ type: 'EditNote', id: 10, noteable: ISSUE, body: 'x' }).then(rejected('not_found', { subject: 'Note' }));
    on(KEY).given(...notes.map(copied)).when({ type: 'EditNote', id: 20, noteable: ISSUE, body: 'x' }).then([{ type: 'NoteEdited', data: { id: 20, ...ISSUE, body: 'x' } }]);
  });
});
