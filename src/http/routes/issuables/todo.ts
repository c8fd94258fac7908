import { Hono } from 'hono';
import { newId, run } from '../../../commands/kernel/run.js';
import { todos } from '../../../domain/todos.js';
import { findTodo } from '../../../projections/todos/queries.js';
import { presentTodos } from '../../entities/todos.js';
import { requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, integerCheck, rawParams } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { issuablePath, type IssuableKind, type IssuableRow } from './kind.js';

/** GitLab 12's API::Todos for an issue or a merge request: TodoService#mark_todo, 304 when the same pending todo exists. */
export function todoRoutes<Row extends IssuableRow>(kind: IssuableKind<Row>) {
  const of = kind.collection === 'issues' ? 'an issue' : 'a merge request';
  return new Hono<AppEnv>().post(
    issuablePath(kind, 'todo'),
    documented({ summary: `Add a to-do item for ${of}`, pathIds: [kind.iidParam], responses: { 201: 'Todo', 304: null, ...REFUSED } }),
    async (c) => {
      const w = await requireWriter(c);
      const project = await userProject(c, w.auth);
      const p = declaration(await rawParams(c));
      p.check(integerCheck(c, kind.iidParam));
      p.done();
      const issuable = await kind.find(c, project, 'read');
      const { db, config } = appContext(c);
      const id = await newId(w, todos);
      const command = { type: 'MarkTodo' as const, id, authorId: w.auth.user.id, targetType: kind.todoType, targetId: issuable.id, projectId: project.row.id, groupId: null };
      await run(w, todos, w.auth.user.id, command);
      const [todo] = await presentTodos(db, config, project.viewer, [(await findTodo(db, w.auth.user.id, id))!]);
      return c.json(todo, 201);
    },
  );
}
