import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { directlyAddressedUsernames, mentionedUsernames } from '../domain/issuable-text.js';
import { todos, type TodoAction, type TodoTargetType } from '../domain/todos.js';
import type { StoredEvent } from '../eventstore/types.js';
import { causedBy } from './kernel/causation.js';
import type { CommandContext } from './kernel/context.js';
import { nextId } from './kernel/handler.js';
import { run } from './kernel/run.js';

/**
 * GitLab's TodoService as issues and merge requests share it: todos for the assigned, the
 * directly addressed and the mentioned users of an issuable, made only for users who may read
 * it (`readers`), authored by the acting user, never twice while one is pending.
 */

/** The issuable a todo is about, and who may read it among some users. */
export interface TodoTarget {
  readonly type: TodoTargetType;
  readonly id: number;
  readonly projectId: number;
  readers(db: Db, userIds: readonly number[], today: string): Promise<Set<number>>;
}

type Text = string | null | undefined;

/** Mentions of some texts: who is addressed at the start of one, and who is mentioned elsewhere. */
function mentionsOf(texts: readonly Text[]) {
  const directly = new Set(texts.flatMap((t) => directlyAddressedUsernames(t)).map((u) => u.toLowerCase()));
  const mentioned = new Set(texts.flatMap((t) => mentionedUsernames(t)).map((u) => u.toLowerCase()).filter((u) => !directly.has(u)));
  return { directly, mentioned };
}

/** Active users by username, case-insensitively. */
async function usersNamed(db: Db, usernames: ReadonlySet<string>): Promise<number[]> {
  if (usernames.size === 0) return [];
  const { rows } = await sql<{ id: number }>`select id from users where lower(username) = any(${[...usernames]}::text[]) and state = 'active' order by id`.execute(db);
  return rows.map((r) => r.id);
}

/** TodoService#create_todos: one todo of `action` for each user who may read the target. */
export async function addTodos(ctx: CommandContext, stored: StoredEvent, userIds: readonly number[], action: Exclude<TodoAction, 'marked'>, authorId: number, target: TodoTarget) {
  const today = ctx.now().toISOString().slice(0, 10);
  const readers = await target.readers(ctx.db, userIds, today);
  for (const userId of [...readers].sort((a, b) => a - b)) {
    const id = await nextId(ctx.db, 'todos_id_seq');
    const command = { type: 'AddTodo' as const, id, authorId, action, targetType: target.type, targetId: target.id, projectId: target.projectId, groupId: null };
    await run(causedBy(ctx, stored), todos, userId, command);
  }
}

/** `directly_addressed` and `mentioned` todos for the users the texts name now and did not before (UpdateService skips those). */
export async function mentionTodos(ctx: CommandContext, stored: StoredEvent, now: readonly Text[], before: readonly Text[], authorId: number, target: TodoTarget) {
  const { directly, mentioned } = mentionsOf(now);
  const { directly: directlyBefore, mentioned: mentionedBefore } = mentionsOf(before);
  const skip = new Set([...directlyBefore, ...mentionedBefore]);
  const fresh = (names: ReadonlySet<string>) => new Set([...names].filter((n) => !skip.has(n)));
  await addTodos(ctx, stored, await usersNamed(ctx.db, fresh(directly)), 'directly_addressed', authorId, target);
  await addTodos(ctx, stored, await usersNamed(ctx.db, fresh(mentioned)), 'mentioned', authorId, target);
}

/** TodoService#mark_pending_todos_as_done: the acting user's pending todos on the target (closed, merged). */
export async function markTargetTodosDone(ctx: CommandContext, stored: StoredEvent, userId: number, type: TodoTargetType, targetId: number) {
  await run(causedBy(ctx, stored), todos, userId, { type: 'MarkTargetTodosDone', targetType: type, targetId });
}
