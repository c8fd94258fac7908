import { Hono, type Context } from 'hono';
import { conflict, forbidden, recordNotFound, serviceNotFound } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import { can } from '../../domain/policy/can.js';
import type { ProjectSubject } from '../../domain/policy/project.js';
import { createIssueLink, deleteIssueLink } from '../../commands/issue-links.js';
import { findIssueLink, linkBetween, relatedIssues } from '../../projections/issue-links/queries.js';
import { canOnIssue, findIssue, findIssueById, issueViews, viewerSubjectsOn } from '../../projections/issues/queries.js';
import type { IssueRow } from '../../projections/issues/tables.js';
import { toIssueLink, toRelatedIssue } from '../entities/issue-links.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { routeNotFound } from '../kernel/errors.js';
import { declared, required, t } from '../kernel/params.js';
import { userProject, type ProjectScope } from '../kernel/scope.js';
import { issueOf } from './issues/find.js';

/**
 * EE's API::IssueLinks (GitLab 12.10, licensed `related_issues`: starter and above; without
 * it no route matches). Every route authenticates, then finds the issue of the path as
 * `find_project_issue` does (404 for one the caller may not read). Linking and unlinking need
 * admin_issue_link (reporters) on both issues.
 */

const ON_ISSUE = { pathIds: ['issue_iid'] } as const;
const ON_LINK = { pathIds: ['issue_iid', 'issue_link_id'] } as const;
const createShape = { target_project_id: required(t.string()), target_issue_iid: required(t.integer()) };

/** `find_project_issue(iid, project_id)`: the project (404 "Project Not Found"), then an issue of it the caller may read (404 "Not found"). */
async function issueIn(c: Context, auth: Auth, projectId: string, iid: number): Promise<{ project: ProjectScope; row: IssueRow }> {
  const project = await userProject(c, auth, undefined, projectId);
  const row = await findIssue(appContext(c).db, project.row.id, iid);
  if (!row || !canOnIssue(project.subject, row, 'read_issue')) throw recordNotFound();
  return { project, row };
}

/** IssuePolicy's admin_issue_link: the project's, on an issue the caller may read. */
const mayLink = (subject: ProjectSubject | undefined, row: IssueRow) => subject !== undefined && canOnIssue(subject, row, 'read_issue') && can(subject, 'admin_issue_link');

/** Entities::IssueLink of two issues read again by id. */
async function presentLink(c: Context, project: ProjectScope, sourceId: number, targetId: number) {
  const { db, config } = appContext(c);
  const rows = await Promise.all([sourceId, targetId].map((id) => findIssueById(db, id)));
  if (!rows[0] || !rows[1]) throw recordNotFound();
  const [source, target] = await issueViews(db, [rows[0], rows[1]]);
  return toIssueLink(source!, target!, config, { projectId: project.row.id, projectPath: project.row.path_with_namespace });
}

const links = new Hono<AppEnv>()
  .get('/projects/:id/issues/:issue_iid/links', documented({ summary: 'Get related issues', ...ON_ISSUE, responses: { 200: 'RelatedIssue[]', 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_ISSUE);
    const project = await userProject(c, auth);
    const issue = await issueOf(c, project);
    const { db, config } = appContext(c);
    // Issue#related_issues(current_user): Ability.issues_readable_by_user over both directions.
    const related = await relatedIssues(db, issue.id);
    const subjects = await viewerSubjectsOn(db, project.viewer, related.map((r) => r.row.project_id));
    const readable = related.filter((r) => {
      const subject = subjects.get(r.row.project_id);
      return subject !== undefined && canOnIssue(subject, r.row, 'read_issue');
    });
    // GitLab presents the whole relation, unpaginated.
    const views = await issueViews(db, readable.map((r) => r.row));
    const context = { projectId: project.row.id, projectPath: project.row.path_with_namespace };
    return c.json(views.map((view, i) => toRelatedIssue(view, config, readable[i]!.issueLinkId, context)));
  })

  .post('/projects/:id/issues/:issue_iid/links', documented({ summary: 'Relate issues', params: createShape, ...ON_ISSUE, responses: { 201: 'IssueLink', ...REFUSED, 409: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const { target_project_id, target_issue_iid } = await declared(c, createShape, ON_ISSUE);
    const project = await userProject(c, w.auth);
    const source = await issueOf(c, project);
    const target = await issueIn(c, w.auth, target_project_id, target_issue_iid);
    const { db } = appContext(c);
    // IssuableLinks::CreateService: a target already related (either way) is a conflict first.
    if (await linkBetween(db, source.id, target.row.id)) throw conflict('Issue(s) already assigned');
    // The target must be linkable (`linkable_issuables`), else "No Issue found for given params".
    if (!mayLink(target.project.subject, target.row)) throw serviceNotFound('No Issue found for given params');
    if (!mayLink(project.subject, source)) throw forbidden();
    await createIssueLink(w, { issueId: source.id, projectId: source.project_id }, { issueId: target.row.id, projectId: target.row.project_id });
    return c.json(await presentLink(c, project, source.id, target.row.id), 201);
  })

  .delete('/projects/:id/issues/:issue_iid/links/:issue_link_id', documented({ summary: 'Remove issues relation', ...ON_LINK, responses: { 200: 'IssueLink', 404: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_LINK);
    const { db } = appContext(c);
    // GitLab 12.10: `IssueLink.find` first (any link, not only the path issue's), then both finds.
    const link = await findIssueLink(db, Number(c.req.param('issue_link_id')));
    if (!link) throw recordNotFound();
    const project = await userProject(c, w.auth);
    await issueOf(c, project);
    const target = await findIssueById(db, link.target_id);
    if (!target) throw recordNotFound();
    await issueIn(c, w.auth, String(target.project_id), target.iid);
    // IssueLinks::DestroyService: admin_issue_link on both ends, else "No Issue Link found".
    const source = await findIssueById(db, link.source_id);
    const subjects = await viewerSubjectsOn(db, project.viewer, [link.source_project_id, link.target_project_id]);
    if (!source || !mayLink(subjects.get(source.project_id), source) || !mayLink(subjects.get(target.project_id), target)) throw serviceNotFound('No Issue Link found');
    const body = await presentLink(c, project, source.id, target.id);
    await deleteIssueLink(w, link.id);
    return c.json(body);
  });

/** CE has no /issues/:issue_iid/links: without the licence no route matches. */
export const issueLinkRoutes = new Hono<AppEnv>()
  // Hono's trailing `/*` matches the bare path too: the list and the link alike.
  .use('/projects/:id/issues/:issue_iid/links/*', async (c, next) => {
    if (!licensed(appContext(c).config.plan, 'related_issues')) throw routeNotFound();
    await next();
  })
  .route('/', links);
