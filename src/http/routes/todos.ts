import { Hono, type Context } from 'hono';
import { recordNotFound } from '../../domain/errors.js';
import { TODO_ACTIONS, TODO_TARGET_TYPES, type TodoAction, type TodoTargetType, todos } from '../../domain/todos.js';
import { findTodo, todosQuery, type TodoFilters } from '../../projections/todos/queries.js';
import { presentTodos } from '../entities/todos.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, today, type AppEnv, type Auth } from '../kernel/context.js';
import { documented } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { INT4_MAX, INTEGER_TEXT, declaration, integerCheck, pathId, rawParams } from '../kernel/params.js';
import { viewerOf } from '../../projections/access.js';
import { run } from '../../commands/kernel/run.js';

/**
 * GitLab's API::Todos (12.x): the caller's own todos. The list's filters are not declared
 * there: TodosFinder reads them as they come and ignores a value it does not know (state:
 * anything but `done` is pending), while an author, project or group that does not exist is
 * ActiveRecord's 404 (`User.find`, `Project.find`, `Group.find`).
 */

const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : undefined);

/** An id `find` looks up: absent, or the id; one no row can have is the finder's 404. */
async function idFilter(c: Context, value: unknown, table: 'users' | 'projects' | 'namespaces'): Promise<number | undefined> {
  const raw = text(value);
  if (raw === undefined || raw === '') return undefined;
  const id = INTEGER_TEXT.test(raw) ? Number(raw) : NaN;
  if (!(id >= 1 && id <= INT4_MAX)) throw recordNotFound();
  let query = appContext(c).db.selectFrom(table).select('id').where('id', '=', id);
  if (table === 'namespaces') query = query.where('kind', '=', 'group');
  if (!(await query.executeTakeFirst())) throw recordNotFound();
  return id;
}

async function filtersOf(c: Context): Promise<TodoFilters> {
  const raw = await rawParams(c);
  const action = text(raw.action);
  const type = text(raw.type);
  return {
    state: text(raw.state) === 'done' ? 'done' : 'pending',
    action: (TODO_ACTIONS as readonly string[]).includes(action ?? '') ? (action as TodoAction) : undefined,
    type: (TODO_TARGET_TYPES as readonly string[]).includes(type ?? '') ? (type as TodoTargetType) : undefined,
    authorId: await idFilter(c, raw.author_id, 'users'),
    projectId: await idFilter(c, raw.project_id, 'projects'),
    groupId: await idFilter(c, raw.group_id, 'namespaces'),
  };
}

const viewer = (c: Context, auth: Auth) => viewerOf(auth.user, today(c));

export const todoRoutes = new Hono<AppEnv>()
  .get('/todos', documented({ summary: "List the current user's to-do items (filters: action, author_id, project_id, group_id, state, type)", responses: { 200: 'Todo[]', 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c);
    const { db, config } = appContext(c);
    const rows = await paginate(c, todosQuery(db, auth.user.id, await filtersOf(c)), (q) => q.orderBy('todos.id', 'desc'));
    return c.json(await presentTodos(db, config, viewer(c, auth), rows));
  })

  .post('/todos/:id/mark_as_done', documented({ summary: 'Mark a to-do item done', pathIds: ['id'], responses: { 201: 'Todo', 404: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'id'));
    p.done();
    const { db, config } = appContext(c);
    const id = pathId(c, 'id');
    const todo = id === null ? undefined : await findTodo(db, w.auth.user.id, id);
    if (!todo) throw recordNotFound();
    await run(w, todos, w.auth.user.id, { type: 'MarkTodosDone', ids: [todo.id] });
    const [done] = await presentTodos(db, config, viewer(c, w.auth), [(await findTodo(db, w.auth.user.id, todo.id))!]);
    return c.json(done, 201);
  })

  .post('/todos/mark_as_done', documented({ summary: 'Mark every pending to-do item done', responses: { 204: null, 404: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const { db } = appContext(c);
    const rows = await todosQuery(db, w.auth.user.id, await filtersOf(c)).select('todos.id as todo_id').execute();
    if (rows.length > 0) await run(w, todos, w.auth.user.id, { type: 'MarkTodosDone', ids: rows.map((r) => r.todo_id) });
    return c.body(null, 204);
  });
