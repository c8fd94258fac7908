import { Hono, type Context } from 'hono';
import { boards, type BoardChanges } from '../../domain/boards.js';
import { forbidden, invalid, recordNotFound } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import { createBoard, createList, deleteList, moveList } from '../../commands/boards.js';
import { run } from '../../commands/kernel/run.js';
import { boardListsQuery, boardsQuery, findBoard, findBoardList, LIST_ORDER } from '../../projections/boards/queries.js';
import type { BoardRow } from '../../projections/boards/tables.js';
import { findLabel } from '../../projections/labels/queries.js';
import { findMilestone } from '../../projections/milestones/queries.js';
import { findUserById } from '../../projections/users/queries.js';
import { presentBoards, presentLists, SPECIAL_BOARD_MILESTONES } from '../entities/boards.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { methodNotAllowed, rendersInvalid } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { declared, optional, required, t } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { pathRow, userProject, type ProjectScope } from '../kernel/scope.js';

/**
 * GitLab 12.10's API::Boards (with API::BoardsResponses) on projects: every route
 * authenticates first; guests and anyone who sees an open project read boards and lists
 * (read_board), reporters change lists (admin_list); all of it is off with the issues
 * feature. EE's API (the `ee` pseudo-feature: starter and above here) adds creating, updating
 * and deleting boards (admin_board, reporters; `multiple_project_issue_boards`), and the
 * board's name and scope in its entity. CE answers those methods 405, as Grape does for a
 * path known under another method. Group boards (API::GroupBoards) are not served: forgelog
 * has no group labels, which are all a group board's lists can name.
 */

/** `requires :board_id, type: Integer`, and `:list_id`. */
const ON_BOARD = { pathIds: ['board_id'] } as const;
const ON_LIST = { pathIds: ['board_id', 'list_id'] } as const;

/** `board_parent.boards.find(params[:board_id])`: "404 Not found". */
const boardOf = (c: Context, project: ProjectScope) => pathRow(c, 'board_id', (db, id) => findBoard(db, project.row.id, id), () => recordNotFound('Board'));

/** `board_lists.find(params[:list_id])`: a label list of the board, or "404 Not found". */
const listOf = (c: Context, board: BoardRow) => pathRow(c, 'list_id', (db, id) => findBoardList(db, board.id, id), () => recordNotFound('List'));

/**
 * The list routes answer a refusal that is not a field's as `render_api_error!({ error: … }, 400)`
 * ("Label not found!", "List could not be moved!") and a List's validation errors with
 * `render_validation_error!`.
 */
const listErrors = rendersInvalid((fields) => (fields.base ? { status: 400, body: { message: { error: fields.base[0] } } } : { status: 400, body: { message: fields } }));

/** EE's board routes: CE knows the path under GET only. */
function eeOnly(c: Context) {
  if (licensed(appContext(c).config.plan, 'ee')) return;
  c.header('Allow', 'GET, HEAD, OPTIONS');
  throw methodNotAllowed();
}

async function present(c: Context, project: ProjectScope, rows: readonly BoardRow[]) {
  const { db, config } = appContext(c);
  return presentBoards(db, config, config.plan, project, rows);
}

async function presentList(c: Context, boardId: number, listId: number) {
  const { db, config } = appContext(c);
  return (await presentLists(db, config.plan, [(await findBoardList(db, boardId, listId))!]))[0];
}

const createShape = { name: required(t.string()) };
const createListShape = { label_id: required(t.integer()) };
const moveListShape = { position: required(t.integer()) };
const updateShape = {
  name: optional(t.string()),
  assignee_id: optional(t.integer()),
  milestone_id: optional(t.integer()),
  labels: optional(t.string()),
  weight: optional(t.integer()),
};

/**
 * EE's Boards::UpdateService, what forgelog keeps of it: a milestone of the project, or one of
 * the special ones (None 0, Upcoming -2, Started -3), else none; an assignee who exists, else
 * none; the labels named (comma-separated titles) that the project has — GitLab would create
 * the missing ones (Labels::FindOrCreateService), forgelog leaves them out.
 */
async function boardChanges(c: Context, project: ProjectScope, p: { name?: string | undefined; assignee_id?: number | undefined; milestone_id?: number | undefined; labels?: string | undefined; weight?: number | undefined }): Promise<BoardChanges> {
  const { db } = appContext(c);
  const changes: { -readonly [K in keyof BoardChanges]: BoardChanges[K] } = {};
  if (p.name !== undefined) changes.name = p.name;
  if (p.weight !== undefined) changes.weight = p.weight;
  if (p.milestone_id !== undefined) {
    const special = p.milestone_id === 0 || SPECIAL_BOARD_MILESTONES[p.milestone_id] !== undefined;
    changes.milestoneId = special || (p.milestone_id > 0 && (await findMilestone(db, project.row.id, p.milestone_id))) ? p.milestone_id : null;
  }
  if (p.assignee_id !== undefined) changes.assigneeId = p.assignee_id > 0 && (await findUserById(db, p.assignee_id)) ? p.assignee_id : null;
  if (p.labels !== undefined) {
    const titles = [...new Set(p.labels.split(',').map((title) => title.trim()))].filter((title) => title !== '');
    const found = await Promise.all(titles.map((title) => findLabel(db, project.row.id, title)));
    changes.labelIds = [...new Set(found.flatMap((label) => (label ? [label.id] : [])))];
  }
  return changes;
}

export const boardRoutes = new Hono<AppEnv>()
  // ───────────────────────────── Boards ─────────────────────────────

  .get('/projects/:id/boards', documented({ summary: 'List project issue boards', responses: { 200: 'Board[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {});
    const project = await userProject(c, auth, 'read_board');
    // GitLab's API lists the boards there are: the first one is made by the web UI's board
    // page (Boards::ListService), which forgelog does not have.
    const rows = await paginate(c, boardsQuery(appContext(c).db, project.row.id), (q) => q.orderBy('id'));
    return c.json(await present(c, project, rows));
  })

  .get('/projects/:id/boards/:board_id', documented({ summary: 'Get a project issue board', ...ON_BOARD, responses: { 200: 'Board', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_BOARD);
    const project = await userProject(c, auth, 'read_board');
    return c.json((await present(c, project, [await boardOf(c, project)]))[0]);
  })

  .post('/projects/:id/boards', documented({ summary: 'Create a project issue board (EE)', params: createShape, responses: { 201: 'Board', ...REFUSED } }), async (c) => {
    eeOnly(c);
    const w = await requireWriter(c);
    const { name } = await declared(c, createShape);
    const project = await userProject(c, w.auth, 'admin_board');
    if (!licensed(appContext(c).config.plan, 'multiple_project_issue_boards')) throw forbidden();
    const { id } = await createBoard(w, project.row.id, name);
    const row = await findBoard(appContext(c).db, project.row.id, id);
    return c.json((await present(c, project, [row!]))[0], 201);
  })

  .put('/projects/:id/boards/:board_id', documented({ summary: 'Update a project issue board (EE)', params: updateShape, ...ON_BOARD, responses: { 200: 'Board', ...REFUSED } }), async (c) => {
    eeOnly(c);
    const w = await requireWriter(c);
    const parsed = await declared(c, updateShape, ON_BOARD);
    const project = await userProject(c, w.auth, 'admin_board');
    const board = await boardOf(c, project);
    await run(w, boards, board.id, { type: 'UpdateBoard', changes: await boardChanges(c, project, parsed) });
    const row = await findBoard(appContext(c).db, project.row.id, board.id);
    return c.json((await present(c, project, [row!]))[0]);
  })

  .delete('/projects/:id/boards/:board_id', documented({ summary: 'Delete a project issue board (EE)', ...ON_BOARD, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    eeOnly(c);
    const w = await requireWriter(c);
    await declared(c, {}, ON_BOARD);
    const project = await userProject(c, w.auth, 'admin_board');
    if (!licensed(appContext(c).config.plan, 'multiple_project_issue_boards')) throw forbidden();
    const board = await boardOf(c, project);
    checkUnmodifiedSince(c, board.updated_at);
    await run(w, boards, board.id, { type: 'DeleteBoard' });
    return c.body(null, 204);
  })

  // ───────────────────────────── Lists ─────────────────────────────

  .get('/projects/:id/boards/:board_id/lists', documented({ summary: "List a board's lists", ...ON_BOARD, responses: { 200: 'List[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_BOARD);
    const project = await userProject(c, auth, 'read_board');
    const board = await boardOf(c, project);
    const { db, config } = appContext(c);
    const rows = await paginate(c, boardListsQuery(db, board.id), LIST_ORDER);
    return c.json(await presentLists(db, config.plan, rows));
  })

  .get('/projects/:id/boards/:board_id/lists/:list_id', documented({ summary: 'Get a board list', ...ON_LIST, responses: { 200: 'List', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_LIST);
    const project = await userProject(c, auth, 'read_board');
    const list = await listOf(c, await boardOf(c, project));
    const { db, config } = appContext(c);
    return c.json((await presentLists(db, config.plan, [list]))[0]);
  })

  .post('/projects/:id/boards/:board_id/lists', documented({ summary: 'Create a board list of a label', params: createListShape, ...ON_BOARD, responses: { 201: 'List', ...REFUSED } }), listErrors, async (c) => {
    const w = await requireWriter(c);
    const { label_id } = await declared(c, createListShape, ON_BOARD);
    const project = await userProject(c, w.auth);
    // GitLab: authorize_list_type_resource! comes first — a label the project does not have is
    // a 400 even for a caller who may not change lists — then admin_list, then the board.
    if (!(await findLabel(appContext(c).db, project.row.id, label_id))) throw invalid({ base: ['Label not found!'] });
    if (!project.can('admin_list')) throw forbidden();
    const board = await boardOf(c, project);
    const listId = await createList(w, project.row.id, board.id, label_id);
    return c.json(await presentList(c, board.id, listId), 201);
  })

  .put('/projects/:id/boards/:board_id/lists/:list_id', documented({ summary: 'Move a board list', params: moveListShape, ...ON_LIST, responses: { 200: 'List', ...REFUSED } }), listErrors, async (c) => {
    const w = await requireWriter(c);
    const { position } = await declared(c, moveListShape, ON_LIST);
    const project = await userProject(c, w.auth);
    // GitLab finds the list before it authorizes admin_list.
    const board = await boardOf(c, project);
    const list = await listOf(c, board);
    if (!project.can('admin_list')) throw forbidden();
    await moveList(w, project.row.id, board.id, list.id, position);
    return c.json(await presentList(c, board.id, list.id));
  })

  .delete('/projects/:id/boards/:board_id/lists/:list_id', documented({ summary: 'Delete a board list', ...ON_LIST, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_LIST);
    const project = await userProject(c, w.auth, 'admin_list');
    const board = await boardOf(c, project);
    const list = await listOf(c, board);
    checkUnmodifiedSince(c, list.updated_at);
    await deleteList(w, project.row.id, board.id, list.id);
    return c.body(null, 204);
  });
