import { Hono, type Context } from 'hono';
import { sql, type SqlBool } from 'kysely';
import { moveIssue } from '../../../commands/issues.js';
import { notFound, serviceError } from '../../../domain/errors.js';
import { mergeRequestClosingReferences, referencesIssue } from '../../../domain/issues/references.js';
import { licensed } from '../../../domain/policy/licensed.js';
import { referencedMergeRequestIds } from '../../../projections/cross-references/queries.js';
import { creationRequestOf } from '../../../projections/issues/queries.js';
import type { IssueRow } from '../../../projections/issues/tables.js';
import { mergeRequestListQuery } from '../../../projections/merge-requests/list-query.js';
import { mergeableBy, mergeRequestViews } from '../../../projections/merge-requests/queries.js';
import type { MergeRequestRow } from '../../../projections/merge-requests/tables.js';
import { toUserAgentDetail } from '../../entities/issues.js';
import { toMergeRequest, toMergeRequestBasic } from '../../entities/merge-requests.js';
import { authenticate, requireAdmin, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../../kernel/context.js';
import { paginateArray } from '../../kernel/pagination.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, integerCheck, rawParams, required, t } from '../../kernel/params.js';
import { userGroup, userProject, type ProjectScope } from '../../kernel/scope.js';
import { issueOf, presentIssueById } from './find.js';

/**
 * GitLab 12.10's API::Issues beyond create/read/update/delete: move, the user agent detail,
 * the merge requests that close an issue and those related to it.
 */

/** `requires :issue_iid, type: Integer`. */
const ON_ISSUE = { pathIds: ['issue_iid'] } as const;
const moveShape = { to_project_id: required(t.integer()) };

async function declaredIid(c: Context) {
  const p = declaration(await rawParams(c));
  p.check(integerCheck(c, 'issue_iid'));
  p.done();
}

/**
 * The merge requests of the issue's project the caller may read that close the issue
 * (MergeRequest#closes_issues, into the default branch); oldest first. A prefilter on the text,
 * then GitLab's reference extraction on each candidate, in memory: two queries whatever the candidates.
 */
async function closingMergeRequests(c: Context, project: ProjectScope, issue: IssueRow): Promise<MergeRequestRow[]> {
  const { db } = appContext(c);
  const candidates = await mergeRequestListQuery(db, project.viewer, { projectId: project.row.id }, { state: 'all' })
    .where(sql<SqlBool>`(merge_requests.title || ' ' || coalesce(merge_requests.description, '')) ~ ${`(#|/issues/)${issue.iid}([^0-9]|$)`}`)
    .orderBy('merge_requests.id')
    .execute();
  const projects = await db
    .selectFrom('projects')
    .select(['id', 'path_with_namespace', 'default_branch'])
    .where('id', 'in', [0, ...new Set(candidates.map((m) => m.project_id))])
    .execute();
  const byId = new Map(projects.map((p) => [p.id, p]));
  const target = { projectId: project.row.id, path: project.row.path_with_namespace, iid: issue.iid };
  return candidates.filter((mr) => {
    const from = byId.get(mr.project_id)!;
    return referencesIssue(mergeRequestClosingReferences(mr, from.default_branch), { id: from.id, path: from.path_with_namespace }, target);
  });
}

/**
 * EE's Issues::MoveService#rewrite_epic_issue: the moved issue's epic link, which the new issue
 * takes when the mover may update_epic on the epic's group (the plan has epics); else it stays.
 */
async function passedEpicLink(c: Context, auth: Auth, issue: IssueRow) {
  const { db, config } = appContext(c);
  if (!licensed(config.plan, 'epics')) return undefined;
  const link = await db.selectFrom('epic_issues').select(['id', 'epic_id', 'epic_group_id', 'relative_position']).where('issue_id', '=', issue.id).executeTakeFirst();
  if (!link) return undefined;
  const group = await userGroup(c, auth, undefined, String(link.epic_group_id)).catch(() => null);
  if (!group?.can('update_epic')) return undefined;
  return { id: link.id, epicId: link.epic_id, epicGroupId: link.epic_group_id, relativePosition: link.relative_position ?? 0 };
}

export const issueMoreRoutes = new Hono<AppEnv>()
  .post('/projects/:id/issues/:issue_iid/move', documented({ summary: 'Move an existing issue', params: moveShape, ...ON_ISSUE, responses: { 201: 'Issue', 404: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'issue_iid'));
    const { to_project_id: toProjectId } = p.parse(moveShape);
    p.done();
    const project = await userProject(c, w.auth);
    // `not_found!('Issue') unless issue`, then `Project.find_by(id:)` or `not_found!('Project')`.
    const issue = await issueOf(c, project, 'read_issue', 'Issue');
    const { db } = appContext(c);
    const target = await db.selectFrom('projects').select('id').where('id', '=', toProjectId).where('pending_delete', '=', false).executeTakeFirst();
    if (!target) throw notFound('Project');
    // Issue#can_move?: admin_issue on both projects (MoveError, 400); then not into its own project.
    const targetScope = await userProject(c, w.auth, undefined, String(toProjectId)).catch(() => null);
    if (!project.can('admin_issue') || !targetScope?.can('admin_issue')) throw serviceError('Cannot move issue due to insufficient permissions!');
    if (toProjectId === project.row.id) throw serviceError('Cannot move issue to project it originates from!');
    const id = await moveIssue(w, issue, toProjectId, w.auth.user.id, await passedEpicLink(c, w.auth, issue));
    return c.json(await presentIssueById(c, project, id), 201);
  })

  .get('/projects/:id/issues/:issue_iid/user_agent_detail', documented({ summary: 'Get the user agent details for an issue', ...ON_ISSUE, auth: 'admin', responses: { 200: 'UserAgentDetail', ...REFUSED } }), async (c) => {
    // `authenticated_as_admin!` first.
    const auth = await requireAdmin(c);
    await declaredIid(c);
    const project = await userProject(c, auth);
    const issue = await issueOf(c, project);
    const detail = await creationRequestOf(appContext(c).db, issue.id);
    if (!detail) throw notFound('UserAgentDetail');
    return c.json(toUserAgentDetail(detail));
  })

  .get('/projects/:id/issues/:issue_iid/closed_by', documented({ summary: 'List merge requests closing issue', ...ON_ISSUE, auth: 'optional', responses: { 200: 'MergeRequestBasic[]', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    await declaredIid(c);
    const project = await userProject(c, auth);
    const issue = await issueOf(c, project);
    // MergeRequestsClosingIssues of the issue, through MergeRequestsFinder(project_id: the issue's project), newest first.
    const rows = (await closingMergeRequests(c, project, issue)).reverse();
    const { db, config } = appContext(c);
    const page = await paginateArray(c, rows);
    const views = await mergeRequestViews(db, page, new Map([[project.row.id, project.row.path_with_namespace]]));
    return c.json(views.map((view) => toMergeRequestBasic(view, config)));
  })

  .get('/projects/:id/issues/:issue_iid/related_merge_requests', documented({ summary: 'List merge requests that are related to the issue', ...ON_ISSUE, auth: 'optional', responses: { 200: 'MergeRequest[]', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    await declaredIid(c);
    const project = await userProject(c, auth);
    const issue = await issueOf(c, project);
    const { db, config } = appContext(c);
    // Issues::ReferencedMergeRequestsService: those the issue and its notes reference (./cross-references), readable by the caller, by iid.
    const ids = await referencedMergeRequestIds(db, issue);
    const rows = ids.length === 0 ? [] : await mergeRequestListQuery(db, project.viewer, 'everywhere', { state: 'all' }).where('merge_requests.id', 'in', ids).orderBy('merge_requests.iid').orderBy('merge_requests.id').execute();
    const page = await paginateArray(c, rows);
    const mergeable = await mergeableBy(db, project.viewer, page);
    // Entities::MergeRequest with include_subscribed: false.
    return c.json(
      (await mergeRequestViews(db, page)).map((view) => {
        const { subscribed: _subscribed, ...entity } = toMergeRequest(view, config, { subscribed: false, canMerge: mergeable.has(view.row.id) });
        return entity;
      }),
    );
  });
