import { Hono, type Context } from 'hono';
import { can } from '../../../domain/policy/can.js';
import { projectAccessLevelOf, viewerOf } from '../../../projections/access.js';
import { findMergeRequestById } from '../../../projections/merge-requests/queries.js';
import type { MergeRequestRow } from '../../../projections/merge-requests/tables.js';
import { toUserBasic } from '../../entities/users.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, today, type AppEnv } from '../../kernel/context.js';
import { pageOf, setPaginationHeaders } from '../../kernel/pagination.js';
import { declaration, integerCheck, rawParams } from '../../kernel/params.js';
import { userProject, type ProjectScope } from '../../kernel/scope.js';
import { mergeRequestOf, presentMergeRequest } from './find.js';
import { run } from '../../../commands/kernel/run.js';
import { mergeRequests } from '../../../domain/merge-requests/aggregate.js';

/**
 * GitLab 12's API::Subscriptions for merge requests (`find_merge_request_with_access(id,
 * :update_merge_request)`, `subscribed?` → 304, else subscribe and present the merge
 * request) and API::MergeRequests' participants endpoint.
 */

/** The subscribable's id is `requires :subscribable_id, type: String`: anything not an iid finds nothing (404). */
async function subscribe(c: Context, type: 'Subscribe' | 'Unsubscribe') {
  const w = await requireWriter(c);
  const project = await userProject(c, w.auth);
  const row = await mergeRequestOf(c, project, 'update_merge_request');
  const { db } = appContext(c);
  // The decider answers 304 when the caller already is (or is not) subscribed.
  await run(w, mergeRequests, row.id, { type, userId: w.auth.user.id });
  return c.json(await presentMergeRequest(c, project, (await findMergeRequestById(db, row.id))!, { subscribed: type === 'Subscribe' }), 201);
}

/**
 * Participable#participants of a merge request: its author, the authors of its notes (none
 * yet) and its assignees, in that order, once each, keeping those who may read the project
 * (Ability.users_that_can_read_project).
 */
async function participantsOf(c: Context, project: ProjectScope, row: MergeRequestRow) {
  const { db } = appContext(c);
  const ids = [...new Set([row.author_id, ...row.assignee_ids])];
  const users = await db.selectFrom('users').select(['id', 'name', 'username', 'state', 'avatar_url', 'email', 'is_admin', 'external']).where('id', 'in', ids).execute();
  const byId = new Map(users.map((u) => [u.id, u]));
  const readers = [];
  for (const id of ids) {
    const user = byId.get(id);
    if (!user) continue;
    const viewer = viewerOf(user, today(c));
    const role = await projectAccessLevelOf(db, viewer, project.row.id);
    if (can({ kind: 'project', viewer, role, project: project.row, personalOwnerId: project.subject.personalOwnerId }, 'read_project')) readers.push(user);
  }
  return readers;
}

export const mergeRequestSubscriptionRoutes = new Hono<AppEnv>()
  .post('/projects/:id/merge_requests/:merge_request_iid/subscribe', (c) => subscribe(c, 'Subscribe'))
  .post('/projects/:id/merge_requests/:merge_request_iid/unsubscribe', (c) => subscribe(c, 'Unsubscribe'))

  .get('/projects/:id/merge_requests/:merge_request_iid/participants', async (c) => {
    // API::MergeRequests: `authenticate_non_get!`.
    const auth = await authenticate(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'merge_request_iid'));
    p.done();
    const page = await pageOf(c);
    const project = await userProject(c, auth);
    const row = await mergeRequestOf(c, project, 'read_merge_request');
    const participants = await participantsOf(c, project, row);
    // Kaminari.paginate_array.
    setPaginationHeaders(c, page, participants.length);
    const { config } = appContext(c);
    return c.json(participants.slice(page.offset, page.offset + page.perPage).map((user) => toUserBasic(user, config)));
  });
