import { Hono, type Context } from 'hono';
import { sql } from 'kysely';
import { createMilestone } from '../../commands/milestones.js';
import { recordNotFound } from '../../domain/errors.js';
import type { MilestoneFields } from '../../domain/milestones.js';
import { MILESTONE_ORDER, findMilestone, milestonesQuery } from '../../projections/milestones/queries.js';
import type { MilestoneRow } from '../../projections/milestones/tables.js';
import { toMilestone } from '../entities/milestones.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, today, type AppEnv } from '../kernel/context.js';
import { failedTo, rendersInvalid } from '../kernel/errors.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { atLeastOneOf, declaration, optional, rawParams, required, t, withDefault, type Shape, declared } from '../kernel/params.js';
import { userProject, type ProjectScope, pathRow } from '../kernel/scope.js';
import { milestones } from '../../domain/milestones.js';
import { run } from '../../commands/kernel/run.js';
import { viewerOf } from '../../projections/access.js';
import { issueListQuery, issueOrder } from '../../projections/issues/list-query.js';
import { issueViews } from '../../projections/issues/queries.js';
import { MERGE_REQUESTS_BY_LABEL_PRIORITY, mergeRequestListQuery } from '../../projections/merge-requests/list-query.js';
import { mergeRequestViews } from '../../projections/merge-requests/queries.js';
import { toIssue } from '../entities/issues.js';
import { toMergeRequestBasic } from '../entities/merge-requests.js';

/**
 * GitLab's API::ProjectMilestones (12.x, with API::MilestoneResponses): members and, on an
 * open project, anyone signed in read; developers write (ProjectPolicy's admin_milestone).
 * Authentication first, then Grape's declaration, then the project (404 hidden, 403 without
 * the ability).
 */

const listShape = {
  state: withDefault(t.values(['active', 'closed', 'all']), 'all'),
  iids: optional(t.array(t.integer())),
  title: optional(t.string()),
  search: optional(t.string()),
  include_parent_milestones: withDefault(t.boolean(), false),
  updated_before: optional(t.datetime()),
  updated_after: optional(t.datetime()),
} satisfies Shape;
const fieldsShape = { description: optional(t.string()), due_date: optional(t.dateColumn()), start_date: optional(t.dateColumn()) } satisfies Shape;
const createShape = { title: required(t.string()), ...fieldsShape } satisfies Shape;
const updateShape = { title: optional(t.string()), state_event: optional(t.values(['close', 'activate'])), ...fieldsShape } satisfies Shape;

/** `requires :milestone_id, type: Integer`. */
const ON_MILESTONE = { pathIds: ['milestone_id'] } as const;

/** `parent.milestones.find(params[:milestone_id])`: another project's id is "404 Not found". */
const milestoneOf = (c: Context, projectId: number): Promise<MilestoneRow> =>
  pathRow(c, 'milestone_id', (db, id) => findMilestone(db, projectId, id), () => recordNotFound('Milestone'));

function present(c: Context, project: ProjectScope, row: MilestoneRow) {
  return toMilestone(row, appContext(c).config, project.row.path_with_namespace);
}

const fieldsOf = (p: { description?: string | undefined; due_date?: string | null | undefined; start_date?: string | null | undefined }): MilestoneFields => ({
  description: p.description,
  dueDate: p.due_date,
  startDate: p.start_date,
});

export const milestoneRoutes = new Hono<AppEnv>()
  .get('/projects/:id/milestones', documented({ summary: 'List project milestones', params: listShape, responses: { 200: 'Milestone[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    const p = declaration(await rawParams(c));
    const f = p.parse(listShape);
    p.done();
    const project = await userProject(c, auth, 'read_milestone');
    // include_parent_milestones: the group's milestones, which do not exist here yet.
    const query = milestonesQuery(appContext(c).db, project.row.id, {
      state: f.state,
      iids: f.iids,
      title: f.title,
      search: f.search,
      updatedBefore: f.updated_before,
      updatedAfter: f.updated_after,
    });
    const rows = await paginate(c, query, MILESTONE_ORDER);
    return c.json(rows.map((row) => present(c, project, row)));
  })

  .get('/projects/:id/milestones/:milestone_id', documented({ summary: 'Get a project milestone', ...ON_MILESTONE, responses: { 200: 'Milestone', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_MILESTONE);
    const project = await userProject(c, auth, 'read_milestone');
    return c.json(present(c, project, await milestoneOf(c, project.row.id)));
  })

  // API::MilestoneResponses#milestone_issuables_for: the finder with `milestone_title` and
  // `sort: 'label_priority'`, every state, as IssueBasic; what the caller may not see of the
  // issues (a confidential one, a feature closed to them) is left out, not refused.
  .get('/projects/:id/milestones/:milestone_id/issues', documented({ summary: 'List the issues of a project milestone', ...ON_MILESTONE, responses: { 200: 'IssueBasic[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_MILESTONE);
    const project = await userProject(c, auth, 'read_milestone');
    const milestone = await milestoneOf(c, project.row.id);
    const { db, config } = appContext(c);
    const query = issueListQuery(db, viewerOf(auth.user, today(c)), { projectId: project.row.id }, { state: 'all', milestone: milestone.title });
    const rows = await paginate(c, query, (q) => q.orderBy(issueOrder('label_priority', 'asc')));
    const views = await issueViews(db, rows, new Map([[project.row.id, project.row.path_with_namespace]]));
    return c.json(views.map((view) => toIssue(view, config, { basic: true, context: { projectId: project.row.id, projectPath: project.row.path_with_namespace } })));
  })

  .get('/projects/:id/milestones/:milestone_id/merge_requests', documented({ summary: 'List the merge requests of a project milestone', ...ON_MILESTONE, responses: { 200: 'MergeRequestBasic[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_MILESTONE);
    const project = await userProject(c, auth, 'read_milestone');
    const milestone = await milestoneOf(c, project.row.id);
    const { db, config } = appContext(c);
    // MergeRequestsFinder: a project whose merge requests the caller may not read gives none.
    let query = mergeRequestListQuery(db, viewerOf(auth.user, today(c)), { projectId: project.row.id }, { state: 'all', milestone: milestone.title });
    if (!project.can('read_merge_request')) query = query.where(sql<boolean>`false`);
    const rows = await paginate(c, query, (q) => q.orderBy(MERGE_REQUESTS_BY_LABEL_PRIORITY));
    const views = await mergeRequestViews(db, rows, new Map([[project.row.id, project.row.path_with_namespace]]));
    return c.json(views.map((view) => toMergeRequestBasic(view, config)));
  })

  .post('/projects/:id/milestones', documented({ summary: 'Create a project milestone', params: createShape, responses: { 201: 'Milestone', ...REFUSED } }), rendersInvalid(failedTo('create milestone')), async (c) => {
    const w = await requireWriter(c);
    const p = declaration(await rawParams(c));
    const parsed = p.parse(createShape);
    p.done();
    const project = await userProject(c, w.auth, 'admin_milestone');
    const { db } = appContext(c);
    const id = await createMilestone(w, { projectId: project.row.id, title: parsed.title, fields: fieldsOf(parsed) });
    return c.json(present(c, project, (await findMilestone(db, project.row.id, id))!), 201);
  })

  .put('/projects/:id/milestones/:milestone_id', documented({ summary: 'Update a project milestone', params: updateShape, ...ON_MILESTONE, responses: { 200: 'Milestone', ...REFUSED } }), rendersInvalid(failedTo('update milestone')), async (c) => {
    const w = await requireWriter(c);
    const parsed = await declared(c, updateShape, { ...ON_MILESTONE, checks: [(raw) => atLeastOneOf(raw, ['title', 'description', 'start_date', 'due_date', 'state_event'])] });
    const project = await userProject(c, w.auth, 'admin_milestone');
    const milestone = await milestoneOf(c, project.row.id);
    const { db } = appContext(c);
    await run(w, milestones, milestone.id, { type: 'UpdateMilestone', fields: { title: parsed.title, ...fieldsOf(parsed) }, stateEvent: parsed.state_event });
    return c.json(present(c, project, (await findMilestone(db, project.row.id, milestone.id))!));
  })

  .delete('/projects/:id/milestones/:milestone_id', documented({ summary: 'Delete a project milestone', ...ON_MILESTONE, responses: { 204: null, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_MILESTONE);
    const project = await userProject(c, w.auth, 'admin_milestone');
    const milestone = await milestoneOf(c, project.row.id);
    await run(w, milestones, milestone.id, { type: 'DeleteMilestone' });
    return c.body(null, 204);
  });
