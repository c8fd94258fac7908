import { Hono } from 'hono';
import { mergeMergeRequest } from '../../../commands/merge-request-merge.js';
import { recordNotFound } from '../../../domain/errors.js';
import { matchingRefs } from '../../../domain/repository/push-access.js';
import { findMergeRequest, mergeableBy } from '../../../projections/merge-requests/queries.js';
import { protectedRefsOf } from '../../../projections/repository/queries.js';
import { requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { unauthorized } from '../../kernel/errors.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, integerCheck, optional, pathId, rawParams, t } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { refWriter } from '../repository-access.js';
import { presentMergeRequest } from './find.js';

/**
 * PUT /projects/:id/merge_requests/:merge_request_iid/merge (GitLab 12's API::MergeRequests
 * `merge`): 401 for a caller who may not update the target branch (`can_be_merged_by?`), 405
 * when the merge request is not in a mergeable state, 406 when the merge conflicts, 409 when
 * `sha` is not its diff head; else the merge in one transaction and Entities::MergeRequest.
 */

const mergeShape = {
  merge_commit_message: optional(t.string()),
  squash_commit_message: optional(t.string()),
  should_remove_source_branch: optional(t.boolean()),
  merge_when_pipeline_succeeds: optional(t.boolean()),
  sha: optional(t.string()),
  squash: optional(t.boolean()),
};

export const mergeRequestMergeRoutes = new Hono<AppEnv>().put(
  '/projects/:id/merge_requests/:merge_request_iid/merge',
  documented({
    summary: 'Merge a merge request',
    params: mergeShape,
    pathIds: ['merge_request_iid'],
    responses: { 200: 'MergeRequest', ...REFUSED, 405: 'Error', 406: 'Error', 409: 'Error' },
  }),
  async (c) => {
    const w = await requireWriter(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'merge_request_iid'));
    const input = p.parse(mergeShape);
    p.done();
    const project = await userProject(c, w.auth);
    const { db } = appContext(c);
    // find_project_merge_request: the project's merge request by iid, whatever the caller may read of it.
    const iid = pathId(c, 'merge_request_iid');
    const row = iid === null ? undefined : await findMergeRequest(db, project.row.id, iid);
    if (!row) throw recordNotFound('Merge Request');
    const refs = await protectedRefsOf(db, project.row.id);
    const writer = refWriter(c, project);
    // can_be_merged_by? (UserAccess#can_update_branch?): "Merge request can not be merged because user dont have permissions to push into target branch".
    if (!writer || !(await mergeableBy(db, project.viewer, [row])).has(row.id)) throw unauthorized();
    // MergeRequest#can_remove_source_branch?: push_code, and a source that is neither protected nor the default branch.
    const mayRemoveSourceBranch = project.can('push_code') && matchingRefs(refs, row.source_branch).length === 0 && project.row.default_branch !== row.source_branch;
    await mergeMergeRequest(
      w,
      {
        id: row.id,
        projectId: project.row.id,
        projectPath: project.row.path_with_namespace,
        byId: w.auth.user.id,
        sha: input.sha,
        squash: input.squash === true,
        mergeCommitMessage: input.merge_commit_message,
        squashCommitMessage: input.squash_commit_message,
        shouldRemoveSourceBranch: input.should_remove_source_branch,
        whenPipelineSucceeds: input.merge_when_pipeline_succeeds === true,
        mayRemoveSourceBranch,
        writer,
      },
    );
    const merged = (await findMergeRequest(db, project.row.id, row.iid))!;
    return c.json(await presentMergeRequest(c, project, merged, { canMerge: true }));
  },
);
