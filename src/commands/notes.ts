import { randomBytes } from 'node:crypto';
import { notes } from '../domain/notes/aggregate.js';
import type { NoteEventOf } from '../domain/notes/events.js';
import type { StoredEvent } from '../eventstore/types.js';
import { mergeRequestReaders } from '../projections/merge-requests/queries.js';
import { markTargetTodosDone, mentionTodos, type TodoTarget } from './issuable-todos.js';
import { issueTodoTarget } from './issue-todos.js';
import type { CommandContext, Writer } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';
import { newId } from './kernel/run.js';

/**
 * What a note's creation needs before its command (its id, a new discussion's id), and what
 * follows it (the mentions' todos).
 */

/**
 * A new note's id: 10 · n, n a number taken from the log's own position sequence, which no
 * event will ever have as its position. System notes (derived from events, never stored) have
 * the ids 10 · p + k, p their event's position (src/domain/notes/system-notes.ts): the two
 * never meet, and both survive a rebuild and a replay, since both are in the log.
 */
export const newNoteId = async (w: Writer): Promise<number> => 10 * (await newId(w, notes));

/** Discussion.discussion_id: the SHA-1 of the noteable and a random part, 40 hex digits. */
export const newDiscussionId = (): string => randomBytes(20).toString('hex');

/**
 * GitLab's TodoService#new_note (handle_note) as a reactor over NoteAdded: the note's author's
 * pending todos on its noteable are done, and the users it mentions get `directly_addressed`
 * or `mentioned` todos on the noteable when they may read it. Notes on merge requests and
 * issues; a commit, a snippet or an epic is no target of forgelog's todos yet (docs/notes.md).
 */
export const noteTodosReactor: Reactor = {
  name: 'note-todos',
  handles: ['NoteAdded'],
  // Todos are for what happens from now on: a new reactor does not replay old notes.
  startAt: 'head',
  async react(stored: StoredEvent, ctx: CommandContext) {
    const d = (stored as unknown as NoteEventOf<'NoteAdded'>).data;
    if (d.noteable_id === null || d.project_id === null) return;
    const projectId = d.project_id;
    let target: TodoTarget | undefined;
    if (d.noteable_type === 'MergeRequest') target = { type: 'MergeRequest', id: d.noteable_id, projectId, readers: (db, userIds, today) => mergeRequestReaders(db, projectId, userIds, today) };
    // An issue's readers as it is now: a confidential one's author, assignees and reporters.
    else if (d.noteable_type === 'Issue') target = await issueTodoTarget(ctx, d.noteable_id, projectId);
    if (!target) return;
    await markTargetTodosDone(ctx, stored, d.author_id, target.type, d.noteable_id);
    await mentionTodos(ctx, stored, [d.body], [], d.author_id, target);
  },
};
