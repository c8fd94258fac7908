import { Hono } from 'hono';
import { rebaseMergeRequest } from '../../../commands/merge-request-rebase.js';
import { committerOf } from '../../../commands/repository.js';
import { forbidden, recordNotFound, resourceLocked } from '../../../domain/errors.js';
import { findMergeRequest } from '../../../projections/merge-requests/queries.js';
import { branchHead } from '../../../projections/merge-requests/mergeability.js';
import { requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declared, optional, t } from '../../kernel/params.js';
import { pathRow, userProject } from '../../kernel/scope.js';
import { branchAccess, collaboratingWriter } from '../repository-access.js';
import { canOnMergeRequest } from './find.js';

/**
 * PUT /projects/:id/merge_requests/:merge_request_iid/rebase (GitLab 12's API::MergeRequests
 * `rebase`): the merge request as `find_project_merge_request` finds it (404 when the caller
 * may not read it), then `authorize_push_to_merge_request!` (403 "Source branch does not
 * exist", 403 "Cannot push to source branch"), a merge request no longer open is 409
 * `409 Conflict: Resource lock` (`rebase_async` raises StaleObjectError, which API::API rescues so), then the rebase (src/commands/merge-request-rebase.ts)
 * and 202 `{"rebase_in_progress": false}`: the rebase is over when the request answers, its
 * failure in the merge request's `merge_error`. `skip_ci` is taken and has nothing to skip.
 */
const rebaseShape = { skip_ci: optional(t.boolean()) };
const ON_MERGE_REQUEST = { pathIds: ['merge_request_iid'] } as const;
const REBASE_BODY = { type: 'object', properties: { rebase_in_progress: { type: 'boolean' } }, required: ['rebase_in_progress'] } as const;

export const mergeRequestRebaseRoutes = new Hono<AppEnv>().put(
  '/projects/:id/merge_requests/:merge_request_iid/rebase',
  documented({ summary: 'Rebase a merge request', params: rebaseShape, ...ON_MERGE_REQUEST, responses: { 202: REBASE_BODY, ...REFUSED, 409: 'Error' } }),
  async (c) => {
    const w = await requireWriter(c);
    await declared(c, rebaseShape, ON_MERGE_REQUEST);
    const project = await userProject(c, w.auth);
    const { db } = appContext(c);
    const row = await pathRow(c, 'merge_request_iid', (db, iid) => findMergeRequest(db, project.row.id, iid), () => recordNotFound('Merge Request'));
    if (!canOnMergeRequest(project, row, 'read_merge_request')) throw recordNotFound('Merge Request');
    if ((await branchHead(db, row.source_project_id, row.source_branch)) === undefined) throw forbidden('Source branch does not exist');
    // Gitlab::UserAccess on the source project (a fork's, or this one).
    const source = row.source_project_id === project.row.id ? project : await userProject(c, w.auth, undefined, String(row.source_project_id)).catch(() => undefined);
    // A maintainer of the target on a collaborative merge request's branch too (`allow_collaboration`).
    const writer = source && (await collaboratingWriter(c, source));
    if (!source || !writer || !(await branchAccess(c, source)).may('push', row.source_branch)) throw forbidden('Cannot push to source branch');
    // GitLab: MergeRequest#rebase_async raises ActiveRecord::StaleObjectError unless open (API: 409 Resource lock).
    if (row.state !== 'opened') throw resourceLocked();
    await rebaseMergeRequest(w, {
      id: row.id,
      projectId: project.row.id,
      sourceProjectId: row.source_project_id,
      sourceBranch: row.source_branch,
      targetBranch: row.target_branch,
      committer: await committerOf(db, w.auth.user.id),
      writer,
    });
    return c.json({ rebase_in_progress: false }, 202);
  },
);
