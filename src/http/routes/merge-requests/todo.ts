import { Hono } from 'hono';
import { findTodo } from '../../../projections/todos/queries.js';
import { presentTodos } from '../../entities/todos.js';
import { requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { declaration, integerCheck, rawParams } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { mergeRequestOf } from './find.js';
import { todos } from '../../../domain/todos.js';
import { newId, run } from '../../../commands/kernel/run.js';

/** GitLab 12's API::Todos for a merge request: TodoService#mark_todo, 304 when the same pending todo exists. */
export const mergeRequestTodoRoutes = new Hono<AppEnv>().post('/projects/:id/merge_requests/:merge_request_iid/todo', async (c) => {
  const w = await requireWriter(c);
  const project = await userProject(c, w.auth);
  const p = declaration(await rawParams(c));
  p.check(integerCheck(c, 'merge_request_iid'));
  p.done();
  const mergeRequest = await mergeRequestOf(c, project);
  const { db, config } = appContext(c);
  const id = await newId(w, todos);
  const command = { type: 'MarkTodo' as const, id, authorId: w.auth.user.id, targetType: 'MergeRequest' as const, targetId: mergeRequest.id, projectId: project.row.id, groupId: null };
  await run(w, todos, w.auth.user.id, command);
  const [todo] = await presentTodos(db, config, project.viewer, [(await findTodo(db, w.auth.user.id, id))!]);
  return c.json(todo, 201);
});
