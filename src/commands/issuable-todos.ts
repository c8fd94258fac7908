import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { unexpired, viewerOf } from '../projections/access.js';
import { groupReadableBy } from '../projections/groups/queries.js';
import { directlyAddressedUsernames, mentionedUsernames } from '../domain/issuable-text.js';
import { todos, todoStreamId, type TodoAction, type TodoTargetType } from '../domain/todos.js';
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

/** Whether some texts mention anyone (a user, a group, `all`): mentionTodos has nothing to do for texts that do not. */
export function mentionsAnyone(texts: readonly Text[]): boolean {
  const { directly, mentioned } = mentionsOf(texts);
  return directly.size > 0 || mentioned.size > 0;
}

/**
 * The users some mentioned names stand for, as Banzai's UserParser#referenced_by finds them:
 * an active user by username (case-insensitively); a group the author may read (read_group,
 * as UserReferenceFilter links it) whose mentions are not disabled, its direct members (not
 * expired; access requests are kept apart); `all`, every member of the target's project, if the author
 * is one (UserReferenceFilter#link_to_all). Blocked users never.
 */
async function usersMentioned(db: Db, names: ReadonlySet<string>, authorId: number, projectId: number | null, today: string): Promise<number[]> {
  if (names.size === 0) return [];
  const wanted = [...names];
  const author = await db.selectFrom('users').select(['id', 'is_admin', 'external']).where('id', '=', authorId).executeTakeFirst();
  const viewer = viewerOf(author, today);
  const groupMembers = sql`
    select m.user_id as id from namespaces n join members m on m.source_type = 'Namespace' and m.source_id = n.id
     where n.kind = 'group' and lower(n.full_path) = any(${wanted}::text[]) and n.mentions_disabled is not true
       and ${groupReadableBy(viewer, 'n')} and ${unexpired(today, 'm')}`;
  const everyone =
    projectId !== null && names.has('all')
      ? sql`
    select a.user_id as id from project_authorizations a
     where a.project_id = ${projectId} and ${unexpired(today, 'a')}
       and exists (select 1 from project_authorizations b where b.project_id = ${projectId} and b.user_id = ${authorId} and ${unexpired(today, 'b')})`
      : sql`select null::integer as id where false`;
  const { rows } = await sql<{ id: number }>`
    select u.id from users u
     where u.state = 'active'
       and (lower(u.username) = any(${wanted}::text[]) or u.id in (${groupMembers}) or u.id in (${everyone}))
     order by u.id`.execute(db);
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
  const today = ctx.now().toISOString().slice(0, 10);
  const directlyAddressed = await usersMentioned(ctx.db, fresh(directly), authorId, target.projectId, today);
  await addTodos(ctx, stored, directlyAddressed, 'directly_addressed', authorId, target);
  // TodoService: the directly addressed get no second todo for a mention.
  const alsoMentioned = new Set(directlyAddressed);
  await addTodos(ctx, stored, (await usersMentioned(ctx.db, fresh(mentioned), authorId, target.projectId, today)).filter((id) => !alsoMentioned.has(id)), 'mentioned', authorId, target);
}

/**
 * TodoService#mark_pending_todos_as_done: the acting user's pending todos on the target
 * (closed, merged, commented on). GitLab does it in the request; a reactor does it here, maybe
 * after the user has made a new todo on the target (python-gitlab's tests close an issue, then
 * mark it a todo), so only the todos made before `stored` in the log are marked: those of the
 * user's stream whose TodoCreated comes before it.
 */
export async function markTargetTodosDone(ctx: CommandContext, stored: StoredEvent, userId: number, type: TodoTargetType, targetId: number) {
  const { rows } = await sql<{ id: number }>`
    select (data->>'id')::integer as id from events
     where stream_id = ${todoStreamId(userId)} and event_type = 'TodoCreated' and global_position < ${stored.globalPosition}::bigint
       and data->>'target_type' = ${type} and (data->>'target_id')::integer = ${targetId}`.execute(ctx.db);
  if (rows.length > 0) await run(causedBy(ctx, stored), todos, userId, { type: 'MarkTodosDone', ids: rows.map((row) => row.id) });
}
