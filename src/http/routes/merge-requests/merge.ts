import { Hono } from 'hono';
import { mergeMergeRequest, updateMergeRef } from '../../../commands/merge-request-merge.js';
import { recordNotFound, serviceError } from '../../../domain/errors.js';
import { can } from '../../../domain/policy/can.js';
import { projectSubjectsOf } from '../../../projections/access.js';
import { branchHead } from '../../../projections/merge-requests/mergeability.js';
import { matchingRefs } from '../../../domain/repository/push-access.js';
import { findMergeRequest, mergeableBy } from '../../../projections/merge-requests/queries.js';
import { protectedRefsOf } from '../../../projections/repository/queries.js';
import { authenticate, requireWriter, writerFor } from '../../kernel/auth.js';
import { appContext, today, type AppEnv } from '../../kernel/context.js';
import { unauthorized } from '../../kernel/errors.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, declared, integerCheck, optional, pathId, rawParams, t } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { refWriter } from '../repository-access.js';
import { mergeRequestOf, presentMergeRequest } from './find.js';

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

const MERGE_REF_BODY = { type: 'object', properties: { commit_id: { type: 'string' } }, required: ['commit_id'], additionalProperties: false } as const;

export const mergeRequestMergeRoutes = new Hono<AppEnv>()
  /**
   * GET …/merge_ref (GitLab 12.x): the merge ref's head, made again when the heads moved since
   * (MergeabilityCheckService#execute(recheck: true)); 400 `Merge request is not mergeable`
   * when they do not merge or the author may not merge, `Merge ref cannot be updated` for a
   * merge request no longer open that has none.
   */
  .get(
    '/projects/:id/merge_requests/:merge_request_iid/merge_ref',
    documented({ summary: 'Returns the up to date merge-ref HEAD commit', pathIds: ['merge_request_iid'], auth: 'optional', responses: { 200: MERGE_REF_BODY, 400: 'Error', ...REFUSED } }),
    async (c) => {
      const auth = await authenticate(c);
      await declared(c, {}, { pathIds: ['merge_request_iid'] });
      const project = await userProject(c, auth);
      const row = await mergeRequestOf(c, project, 'read_merge_request');
      const { db } = appContext(c);
      const notMergeable = () => serviceError('Merge request is not mergeable');
      if (row.state !== 'opened') {
        if (row.merge_status !== 'can_be_merged') throw notMergeable();
        if (row.merge_ref_sha === null) throw serviceError('Merge ref cannot be updated');
        return c.json({ commit_id: row.merge_ref_sha });
      }
      // Not outdated (the ref's parents, as the projection keeps them, are the heads): answered as it is.
      if (row.merge_ref_sha !== null && row.merge_status === 'can_be_merged' && row.merge_ref_source_sha === row.head_sha) {
        if (row.merge_ref_target_sha === (await branchHead(db, row.project_id, row.target_branch))) return c.json({ commit_id: row.merge_ref_sha });
      }
      // MergeToRefService runs as the merge request's author: admin_merge_request on the project (a blocked author has none).
      const [author] = await projectSubjectsOf(db, project.row.id, [row.author_id], today(c));
      const mayMerge = author !== undefined && can(author, 'admin_merge_request');
      const sha = await updateMergeRef(writerFor(c, auth), { id: row.id, projectPath: project.row.path_with_namespace, mayMerge });
      if (sha === null) throw notMergeable();
      return c.json({ commit_id: sha });
    },
  )
  .put(
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
    const writer = refWriter(c, project);
    // can_be_merged_by? (UserAccess#can_update_branch?): "Merge request can not be merged because user dont have permissions to push into target branch".
    if (!writer || !(await mergeableBy(db, project.viewer, [row])).has(row.id)) throw unauthorized();
    // MergeRequest#can_remove_source_branch?: push_code on the source project (a fork's, or this one), and a
    // source branch that is neither protected nor the default branch there.
    const source = row.source_project_id === project.row.id ? project : await userProject(c, w.auth, undefined, String(row.source_project_id)).catch(() => undefined);
    const sourceWriter = source && refWriter(c, source);
    const mayRemoveSourceBranch =
      source !== undefined &&
      !!sourceWriter &&
      source.can('push_code') &&
      matchingRefs(await protectedRefsOf(db, source.row.id), row.source_branch).length === 0 &&
      source.row.default_branch !== row.source_branch;
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
        sourceProjectId: row.source_project_id,
        sourceWriter: sourceWriter || writer,
      },
    );
    const merged = (await findMergeRequest(db, project.row.id, row.iid))!;
    return c.json(await presentMergeRequest(c, project, merged, { canMerge: true }));
  },
);
