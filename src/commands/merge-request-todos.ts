import { unhandled } from '../domain/decider.js';
import type { MergeRequestEventOf } from '../domain/merge-requests/events.js';
import type { StoredEvent } from '../eventstore/types.js';
import { mergeRequestReaders } from '../projections/merge-requests/queries.js';
import { addTodos, markTargetTodosDone, mentionsAnyone, mentionTodos, type TodoTarget } from './issuable-todos.js';
import type { CommandContext } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';

/**
 * GitLab's TodoService for merge requests, as a reactor over the merge request events:
 * - opened: `assigned` for each assignee, `directly_addressed` for users mentioned at the very
 *   start of the title or description, `mentioned` for the others mentioned there;
 * - updated: the same for newly assigned users and for users newly mentioned by a changed
 *   title or description (those mentioned before are skipped, as UpdateService does);
 * - merge status checked as cannot_be_merged: `unmergeable` for the author
 *   (MergeRequest#merge_participants; forgelog has no merge when pipeline succeeds);
 * - merged or closed: the acting user's pending todos on it are done (mark_pending_todos_as_done).
 * A todo is made only for a user who may read the merge request, authored by the acting user
 * (the merge request's author for `unmergeable`), and never twice while one is pending.
 * `@group` and `@all` stand for their members (issuable-todos.ts, usersMentioned).
 */

type Handled = MergeRequestEventOf<'MergeRequestOpened' | 'MergeRequestUpdated' | 'MergeRequestMergeStatusChecked' | 'MergeRequestMerged' | 'MergeRequestClosed'>;
const HANDLED = ['MergeRequestOpened', 'MergeRequestUpdated', 'MergeRequestMergeStatusChecked', 'MergeRequestMerged', 'MergeRequestClosed'] as const satisfies readonly Handled['type'][];

/** A merge request as a todo's target: read_merge_request decides who gets one. */
const target = (data: { id: number; project_id: number }): TodoTarget => ({
  type: 'MergeRequest',
  id: data.id,
  projectId: data.project_id,
  readers: (db, userIds, today) => mergeRequestReaders(db, data.project_id, userIds, today),
});

export const mergeRequestTodosReactor: Reactor = {
  name: 'merge-request-todos',
  handles: HANDLED,
  // Todos are for what happens from now on: a new reactor does not replay old assignments.
  startAt: 'head',
  // An opening that assigns and mentions nobody, a check that found the merge request mergeable.
  ignores(stored: StoredEvent) {
    const event = stored as unknown as Handled;
    if (event.type === 'MergeRequestOpened') return event.data.assignee_ids.length === 0 && !mentionsAnyone([event.data.title, event.data.description]);
    return event.type === 'MergeRequestMergeStatusChecked' && event.data.merge_status !== 'cannot_be_merged';
  },
  async react(stored: StoredEvent, ctx: CommandContext) {
    const event = stored as unknown as Handled;
    switch (event.type) {
      case 'MergeRequestOpened': {
        const d = event.data;
        await addTodos(ctx, stored, d.assignee_ids, 'assigned', d.author_id, target(d));
        await mentionTodos(ctx, stored, [d.title, d.description], [], d.author_id, target(d));
        return;
      }
      case 'MergeRequestUpdated': {
        // An update is a user's; without one (a system change) nobody is assigned or mentioned by it.
        const actorId = stored.metadata.actor_id;
        if (actorId == null) return;
        const { changes, previous } = event.data;
        if (changes.assignee_ids !== undefined) {
          const before = new Set(previous.assignee_ids ?? []);
          await addTodos(ctx, stored, changes.assignee_ids.filter((id) => !before.has(id)), 'assigned', actorId, target(event.data));
        }
        if (changes.title !== undefined || changes.description !== undefined) {
          const row = await ctx.db.selectFrom('merge_requests').select(['title', 'description']).where('id', '=', event.data.id).executeTakeFirst();
          if (!row) return;
          const title = changes.title ?? row.title;
          const description = changes.description !== undefined ? changes.description : row.description;
          const oldTitle = previous.title ?? title;
          const oldDescription = previous.description !== undefined ? previous.description : description;
          await mentionTodos(ctx, stored, [title, description], [oldTitle, oldDescription], actorId, target(event.data));
        }
        return;
      }
      case 'MergeRequestMergeStatusChecked': {
        if (event.data.merge_status !== 'cannot_be_merged') return;
        const row = await ctx.db.selectFrom('merge_requests').select(['author_id', 'state']).where('id', '=', event.data.id).executeTakeFirst();
        if (!row || row.state !== 'opened') return;
        await addTodos(ctx, stored, [row.author_id], 'unmergeable', row.author_id, target(event.data));
        return;
      }
      case 'MergeRequestMerged':
      case 'MergeRequestClosed':
        await markTargetTodosDone(ctx, stored, event.data.by_id, 'MergeRequest', event.data.id);
        return;
      default:
        unhandled(event);
    }
  },
};
