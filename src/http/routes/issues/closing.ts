import { Hono } from 'hono';
import { mergeRequestClosingReferences } from '../../../domain/issues/references.js';
import { canOnIssue, issueViews, referencedIssues, viewerSubjectsOn } from '../../../projections/issues/queries.js';
import { toIssue } from '../../entities/issues.js';
import { authenticate } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { paginateArray } from '../../kernel/pagination.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, integerCheck, rawParams } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { mergeRequestOf } from '../merge-requests/find.js';

/**
 * GitLab 12's `GET /projects/:id/merge_requests/:merge_request_iid/closes_issues`:
 * MergeRequest#visible_closing_issues_for — the issues its title and description close (into the
 * default branch only) that the caller may read, as Entities::IssueBasic.
 */
export const issueClosingRoutes = new Hono<AppEnv>().get(
  '/projects/:id/merge_requests/:merge_request_iid/closes_issues',
  documented({ summary: 'List issues that will be closed on merge', pathIds: ['merge_request_iid'], auth: 'optional', responses: { 200: 'IssueBasic[]', ...REFUSED } }),
  async (c) => {
    const auth = await authenticate(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'merge_request_iid'));
    p.done();
    const project = await userProject(c, auth);
    const mr = await mergeRequestOf(c, project, 'read_merge_request');
    const { db, config } = appContext(c);
    const referenced = await referencedIssues(db, project.row, mergeRequestClosingReferences(mr, project.row.default_branch));
    const elsewhere = await viewerSubjectsOn(db, project.viewer, referenced.filter((i) => i.project_id !== project.row.id).map((i) => i.project_id));
    const visible = referenced.filter((issue) => {
      const subject = issue.project_id === project.row.id ? project.subject : elsewhere.get(issue.project_id);
      return subject !== undefined && canOnIssue(subject, issue, 'read_issue');
    });
    const page = await paginateArray(c, visible);
    const views = await issueViews(db, page, new Map([[project.row.id, project.row.path_with_namespace]]));
    return c.json(views.map((view) => toIssue(view, config, { context: { projectId: project.row.id, projectPath: project.row.path_with_namespace }, basic: true })));
  },
);
