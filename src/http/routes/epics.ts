import { Hono, type Context } from 'hono';
import { createEpic, deleteEpic } from '../../commands/epics.js';
import type { EpicFields } from '../../domain/epics.js';
import { forbidden } from '../../domain/errors.js';
import type { GroupAbility } from '../../domain/policy/group.js';
import { licensed } from '../../domain/policy/licensed.js';
import { epicsQuery, findEpic, findEpicById, type EpicView } from '../../projections/epics/queries.js';
import { findTodo } from '../../projections/todos/queries.js';
import { canAdminEpic, toEpic } from '../entities/epics.js';
import { presentTodos } from '../entities/todos.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { atLeastOneOf, declaration, optional, pathId, rawParams, required, t, withDefault, type Shape, declared } from '../kernel/params.js';
import { userGroup, type GroupScope } from '../kernel/scope.js';
import { epics } from '../../domain/epics.js';
import { todos } from '../../domain/todos.js';
import { newId, run } from '../../commands/kernel/run.js';

/**
 * GitLab EE's API::Epics (12.x) and the epic todo of EE's API::Todos. Every route
 * authenticates first (the spec: authentication required), then finds the group (404 when
 * hidden) and asks the plan (`authorize_epics_feature!`: 403 below ultimate), then parses its
 * parameters, as Grape runs the `before` block ahead of the declaration.
 */

/** `user_group` + `authorize_epics_feature!`. */
export async function epicsGroup(c: Context, auth: Auth): Promise<GroupScope> {
  const group = await userGroup(c, auth);
  if (!licensed(appContext(c).config.plan, 'epics')) throw forbidden();
  return group;
}

/**
 * `user_group.epics.find_by(iid:)` then `authorize!(ability, epic)`: GitLab 12 asks the
 * ability of a missing epic too, and the answer is 403 (a nil subject allows nothing).
 */
export async function epicOf(c: Context, group: GroupScope, ability: GroupAbility): Promise<EpicView> {
  const iid = pathId(c, 'epic_iid');
  const epic = iid === null ? undefined : await findEpic(appContext(c).db, group.viewer, group.row.id, iid);
  if (!epic || !group.can(ability)) throw forbidden();
  return epic;
}

function present(c: Context, group: GroupScope, epic: EpicView, single = false) {
  return toEpic(epic, appContext(c).config, { canAdmin: canAdminEpic(group.viewer, epic), ...(single ? { subscribedFor: group.viewer?.id ?? null } : {}) });
}

const listShape = {
  order_by: withDefault(t.values(['created_at', 'updated_at']), 'created_at'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
  search: optional(t.string()),
  state: withDefault(t.values(['opened', 'closed', 'all']), 'all'),
  author_id: optional(t.integer()),
  labels: optional(t.array(t.string())),
  created_after: optional(t.datetime()),
  created_before: optional(t.datetime()),
  updated_after: optional(t.datetime()),
  updated_before: optional(t.datetime()),
  include_ancestor_groups: withDefault(t.boolean(), false),
  include_descendant_groups: withDefault(t.boolean(), true),
} satisfies Shape;

const fieldsShape = {
  description: optional(t.string()),
  start_date_is_fixed: optional(t.boolean()),
  start_date_fixed: optional(t.dateColumn()),
  due_date_is_fixed: optional(t.boolean()),
  due_date_fixed: optional(t.dateColumn()),
  labels: optional(t.array(t.string())),
} satisfies Shape;
const createShape = { title: required(t.string()), ...fieldsShape, parent_id: optional(t.integer()) } satisfies Shape;
const updateShape = { title: optional(t.string()), ...fieldsShape, state_event: optional(t.values(['reopen', 'close'])) } satisfies Shape;
/** PUT's `at_least_one_of`, in its declaration's order. */
const UPDATABLE = ['title', 'description', 'start_date_fixed', 'start_date_is_fixed', 'due_date_fixed', 'due_date_is_fixed', 'labels', 'state_event'];

function fieldsOf(p: { description?: string | undefined; start_date_is_fixed?: boolean | undefined; start_date_fixed?: string | null | undefined; due_date_is_fixed?: boolean | undefined; due_date_fixed?: string | null | undefined; labels?: string[] | undefined }): EpicFields {
  return {
    description: p.description,
    labels: p.labels?.join(','),
    startDateIsFixed: p.start_date_is_fixed,
    startDateFixed: p.start_date_fixed,
    dueDateIsFixed: p.due_date_is_fixed,
    dueDateFixed: p.due_date_fixed,
  };
}

/** `requires :epic_iid, type: Integer`. */
const ON_EPIC = { pathIds: ['epic_iid'] } as const;

export const epicRoutes = new Hono<AppEnv>()
  .get('/groups/:id/epics', documented({ summary: 'Get epics for the group', params: listShape, responses: { 200: 'Epic[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    const group = await epicsGroup(c, auth);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const f = p.parse(listShape);
    p.done();
    const { db } = appContext(c);
    const query = epicsQuery(db, group.viewer, group.row, {
      state: f.state,
      authorId: f.author_id,
      labels: f.labels?.map((label) => label.trim()).filter((label) => label !== ''),
      search: f.search,
      createdAfter: f.created_after,
      createdBefore: f.created_before,
      updatedAfter: f.updated_after,
      updatedBefore: f.updated_before,
      includeAncestorGroups: f.include_ancestor_groups,
      includeDescendantGroups: f.include_descendant_groups,
    });
    const rows = await paginate(c, query, (q) => q.orderBy(`epics.${f.order_by}`, f.sort).orderBy('epics.id', f.sort));
    return c.json(rows.map((row) => present(c, group, row)));
  })

  .get('/groups/:id/epics/:epic_iid', documented({ summary: 'Get details of an epic', ...ON_EPIC, responses: { 200: 'Epic', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    const group = await epicsGroup(c, auth);
    await declared(c, {}, ON_EPIC);
    const epic = await epicOf(c, group, 'read_epic');
    return c.json(present(c, group, epic, true));
  })

  .post('/groups/:id/epics', documented({ summary: 'Create a new epic', params: createShape, responses: { 201: 'Epic', ...REFUSED, 422: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const group = await epicsGroup(c, w.auth);
    const p = declaration(await rawParams(c));
    const parsed = p.parse(createShape);
    p.done();
    if (!group.can('admin_epic')) throw forbidden();
    const { db } = appContext(c);
    const id = await createEpic(
      w,
      { groupId: group.row.id, authorId: w.auth.user.id, title: parsed.title, parentId: parsed.parent_id, fields: fieldsOf(parsed) },
    );
    return c.json(present(c, group, (await findEpicById(db, group.viewer, id))!), 201);
  })

  .put('/groups/:id/epics/:epic_iid', documented({ summary: 'Update an epic', params: updateShape, ...ON_EPIC, responses: { 200: 'Epic', ...REFUSED, 422: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const group = await epicsGroup(c, w.auth);
    const parsed = await declared(c, updateShape, { ...ON_EPIC, checks: [(raw) => atLeastOneOf(raw, UPDATABLE)] });
    const epic = await epicOf(c, group, 'admin_epic');
    const { db } = appContext(c);
    await run(w, epics, epic.id, { type: 'UpdateEpic', fields: { ...fieldsOf(parsed), title: parsed.title }, stateEvent: parsed.state_event });
    return c.json(present(c, group, (await findEpicById(db, group.viewer, epic.id))!));
  })

  .delete('/groups/:id/epics/:epic_iid', documented({ summary: 'Destroy an epic', ...ON_EPIC, responses: { 204: null, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const group = await epicsGroup(c, w.auth);
    await declared(c, {}, ON_EPIC);
    const epic = await epicOf(c, group, 'destroy_epic');
    await deleteEpic(w, epic.id);
    return c.body(null, 204);
  })

  // EE::API::Todos: TodoService#mark_todo, 304 when the same pending todo exists.
  .post('/groups/:id/epics/:epic_iid/todo', documented({ summary: 'Create a todo on an epic', ...ON_EPIC, responses: { 201: 'Todo', 304: null, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const group = await epicsGroup(c, w.auth);
    await declared(c, {}, ON_EPIC);
    const epic = await epicOf(c, group, 'read_epic');
    const { db } = appContext(c);
    const id = await newId(w, todos);
    await run(
      w,
      todos,
      w.auth.user.id,
      { type: 'MarkTodo', id, authorId: w.auth.user.id, targetType: 'Epic', targetId: epic.id, projectId: null, groupId: epic.group_id },
    );
    const [todo] = await presentTodos(db, appContext(c).config, group.viewer, [(await findTodo(db, w.auth.user.id, id))!]);
    return c.json(todo, 201);
  });
