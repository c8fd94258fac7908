import { unhandled } from '../domain/decider.js';
import type { IssueEventOf } from '../domain/issues/events.js';
import type { StoredEvent } from '../eventstore/types.js';
import { issueReaders } from '../projections/issues/queries.js';
import { addTodos, markTargetTodosDone, mentionsAnyone, mentionTodos, type TodoTarget } from './issuable-todos.js';
import type { CommandContext } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';

/**
 * GitLab's TodoService for issues, as a reactor over the issue events (the merge requests'
 * twin, src/commands/merge-request-todos.ts): `assigned`, `directly_addressed` and
 * `mentioned` todos when an issue is opened or updated, only for users who may read the issue
 * as it is now (a confidential one: its author, assignees and reporters); closing marks the
 * closer's pending todos on it done.
 */

type Handled = IssueEventOf<'IssueOpened' | 'IssueUpdated' | 'IssueClosed'>;
const HANDLED = ['IssueOpened', 'IssueUpdated', 'IssueClosed'] as const satisfies readonly Handled['type'][];

export async function issueTodoTarget(ctx: CommandContext, id: number, projectId: number): Promise<(TodoTarget & { title: string; description: string | null }) | undefined> {
  const row = await ctx.db.selectFrom('issues').select(['author_id', 'assignee_ids', 'confidential', 'title', 'description']).where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  return { type: 'Issue', id, projectId, title: row.title, description: row.description, readers: (db, userIds, today) => issueReaders(db, projectId, userIds, today, row) };
}

export const issueTodosReactor: Reactor = {
  name: 'issue-todos',
  handles: HANDLED,
  // Todos are for what happens from now on: a new reactor does not replay old assignments.
  startAt: 'head',
  // An opening that assigns and mentions nobody.
  ignores(stored: StoredEvent) {
    const event = stored as unknown as Handled;
    return event.type === 'IssueOpened' && event.data.assignee_ids.length === 0 && !mentionsAnyone([event.data.title, event.data.description]);
  },
  async react(stored: StoredEvent, ctx: CommandContext) {
    const event = stored as unknown as Handled;
    switch (event.type) {
      case 'IssueOpened': {
        const d = event.data;
        const issue = await issueTodoTarget(ctx, d.id, d.project_id);
        if (!issue) return;
        await addTodos(ctx, stored, d.assignee_ids, 'assigned', d.author_id, issue);
        await mentionTodos(ctx, stored, [d.title, d.description], [], d.author_id, issue);
        return;
      }
      case 'IssueUpdated': {
        const actorId = stored.metadata.actor_id;
        if (actorId == null) return;
        const { changes, previous } = event.data;
        const issue = await issueTodoTarget(ctx, event.data.id, event.data.project_id);
        if (!issue) return;
        if (changes.assignee_ids !== undefined) {
          const before = new Set(previous.assignee_ids ?? []);
          await addTodos(ctx, stored, changes.assignee_ids.filter((id) => !before.has(id)), 'assigned', actorId, issue);
        }
        if (changes.title !== undefined || changes.description !== undefined) {
          const title = changes.title ?? issue.title;
          const description = changes.description !== undefined ? changes.description : issue.description;
          const oldTitle = previous.title ?? title;
          const oldDescription = previous.description !== undefined ? previous.description : description;
          await mentionTodos(ctx, stored, [title, description], [oldTitle, oldDescription], actorId, issue);
        }
        return;
      }
      case 'IssueClosed':
        await markTargetTodosDone(ctx, stored, event.data.by_id, 'Issue', event.data.id);
        return;
      default:
        unhandled(event);
    }
  },
};
