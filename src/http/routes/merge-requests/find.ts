import type { Context } from 'hono';
import { forbidden, recordNotFound } from '../../../domain/errors.js';
import type { ProjectAbility } from '../../../domain/policy/project.js';
import { mergeableIn, mergeRequestQuery, mergeRequestViewReads, subscribedIn, subscriptionsQuery } from '../../../projections/merge-requests/queries.js';
import { protectedRefsFrom, protectedRefsQuery } from '../../../projections/repository/queries.js';
import type { CompiledQuery } from 'kysely';
import type { Db } from '../../../database/database.js';
import { readTogether, type RowsOfEach } from '../../../database/read-together.js';
import type { MergeRequestRow } from '../../../projections/merge-requests/tables.js';
import { toMergeRequest, type MergeRequestDetail } from '../../entities/merge-requests.js';
import { appContext } from '../../kernel/context.js';
import { pathId } from '../../kernel/params.js';
import { type ProjectScope } from '../../kernel/scope.js';
import { currentMergeStatus } from '../../../projections/merge-requests/mergeability.js';
import { run } from '../../../commands/kernel/run.js';
import { mergeRequests } from '../../../domain/merge-requests/aggregate.js';
import { findMergeRequestById } from '../../../projections/merge-requests/queries.js';
import type { IssuableKind } from '../issuables/kind.js';

/**
 * What every route under /projects/:id/merge_requests/:merge_request_iid shares: finding the
 * merge request and presenting it.
 */

/**
 * GitLab's `find_merge_request_with_access(iid, ability)`: `user_project.merge_requests.find_by!(iid:)`
 * (404 "Not found" when there is none), then `authorize! ability` (403). The project scope has
 * already answered 404 for a project the caller may not see.
 */
export async function mergeRequestOf(c: Context, project: ProjectScope, ability: ProjectAbility = 'read_merge_request'): Promise<MergeRequestRow> {
  return (await mergeRequestWith(c, project, ability, () => []))[0];
}

/**
 * mergeRequestOf, and the reads `alongside` makes of what belongs to the merge request the
 * path's iid names (its versions, their files…): in the same round trip when the project grants
 * the ability, after the merge request when only the row can (its author's or assignee's own
 * update). A caller refused reads none of them; the answers keep GitLab's order. A `null`
 * among them is a read the caller does without (readTogether).
 */
export async function mergeRequestWith<const Q extends readonly (CompiledQuery<any> | null)[]>(
  c: Context,
  project: ProjectScope,
  ability: ProjectAbility,
  alongside: (db: Db, iid: number) => Q,
): Promise<[MergeRequestRow, ...RowsOfEach<Q>]> {
  const iid = pathId(c, 'merge_request_iid');
  if (iid === null) throw recordNotFound('Merge Request');
  const { db } = appContext(c);
  const granted = project.can(ability);
  const [[row], ...rows] = await readTogether(db, [mergeRequestQuery(db, project.row.id, iid), ...(granted ? alongside(db, iid) : [])]);
  if (!row) throw recordNotFound('Merge Request');
  if (!canOnMergeRequest(project, row, ability)) throw forbidden();
  return [row, ...((granted ? rows : await readTogether(db, alongside(db, iid))) as RowsOfEach<Q>)];
}

/**
 * An ability on one merge request: the project's, and IssuablePolicy's `assignee_or_author`
 * rule — the author and assignees may update (and reopen) their own merge request when they
 * can read it, whatever their role.
 */
export function canOnMergeRequest(project: ProjectScope, row: MergeRequestRow, ability: ProjectAbility): boolean {
  if (project.can(ability)) return true;
  const viewerId = project.viewer?.id;
  const own = viewerId !== undefined && (row.author_id === viewerId || row.assignee_ids.includes(viewerId));
  return ability === 'update_merge_request' && own && project.can('read_merge_request') && !project.row.archived;
}

/**
 * Entities::MergeRequest of a row, the single view (`subscribed` and `user.can_merge` for the caller). As GitLab
 * 12's entity runs MergeRequest#check_mergeability unless a list skips it, an unchecked
 * merge status is computed now, on every single view (show, create, update, changes…).
 */
export async function presentMergeRequest(c: Context, project: ProjectScope, row: MergeRequestRow, detail: Partial<MergeRequestDetail> = {}) {
  const { db, config } = appContext(c);
  const viewerId = project.viewer?.id ?? null;
  // The view's reads, the caller's subscription and the branch rules, in one round trip.
  const reads = mergeRequestViewReads(db, [row], new Map([[project.row.id, project.row.path_with_namespace]]));
  const [subscriptions, rules, ...viewRows] = await readTogether(db, [
    detail.subscribed === undefined && viewerId !== null ? subscriptionsQuery(db, [row], viewerId) : null,
    detail.canMerge === undefined && viewerId !== null ? protectedRefsQuery(db, project.row.id) : null,
    ...reads.queries,
  ]);
  const [view] = reads.views(viewRows as Parameters<typeof reads.views>[0]);
  const subscribed = detail.subscribed ?? (viewerId !== null && subscribedIn([row], viewerId, subscriptions).has(row.id));
  const mergeStatus = detail.mergeStatus ?? (await currentMergeStatus(db, row));
  const canMerge = detail.canMerge ?? (await mergeableIn(db, project.row.id, project.subject, [row], protectedRefsFrom(rules))).has(row.id);
  return toMergeRequest(view!, config, { ...detail, subscribed, mergeStatus, canMerge });
}

/**
 * Merge requests for the endpoints they share with issues (src/http/routes/issuables/): the
 * subscriptions ask update_merge_request (`find_merge_request_with_access(id, :update_merge_request)`),
 * time tracking admin_merge_request.
 */
export const MERGE_REQUEST_KIND: IssuableKind<MergeRequestRow> = {
  collection: 'merge_requests',
  iidParam: 'merge_request_iid',
  todoType: 'MergeRequest',
  find: (c, project, access) => mergeRequestOf(c, project, access === 'read' ? 'read_merge_request' : access === 'subscribe' ? 'update_merge_request' : 'admin_merge_request'),
  findById: findMergeRequestById,
  run: (w, id, command) => run(w, mergeRequests, id, command),
  present: (c, project, row, subscribed) => presentMergeRequest(c, project, row, subscribed === undefined ? {} : { subscribed }),
};
