import { Hono, type Context } from 'hono';
import { notFound } from '../../domain/errors.js';
import { ACTIVITY_ACTIONS, ACTIVITY_TARGET_FILTERS } from '../../domain/feeds/activity.js';
import { canReadUserProfile } from '../../domain/policy/user.js';
import type { Viewer } from '../../domain/access.js';
import { viewerOf } from '../../projections/access.js';
import { activityFeed, type ActivityFilters, type ActivitySource } from '../../projections/feeds/activity.js';
import { findUserByIdOrUsername } from '../../projections/users/queries.js';
import { toEvent } from '../entities/events.js';
import { USER_SCOPES, authenticate, requireUser } from '../kernel/auth.js';
import { appContext, today, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { COUNT_LIMIT, pageOf, setPaginationHeaders } from '../kernel/pagination.js';
import { optional, params, t, withDefault } from '../kernel/params.js';
import { userProject } from '../kernel/scope.js';

/** GitLab's event_filter_params and sort_params (API::Events). */
const feedShape = {
  action: optional(t.values(ACTIVITY_ACTIONS)),
  target_type: optional(t.values(ACTIVITY_TARGET_FILTERS)),
  before: optional(t.date()),
  after: optional(t.date()),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
};

/** One page of a feed, with GitLab's pagination headers (without counts past COUNT_LIMIT). */
async function presentFeed(c: Context, source: ActivitySource, viewer: Viewer | null, filters: ActivityFilters) {
  const { db, config, commands } = appContext(c);
  const page = await pageOf(c);
  const { rows, total, hasNext } = await activityFeed(db, source, viewer, filters, commands.now(), { limit: page.perPage, offset: page.offset, countLimit: COUNT_LIMIT });
  setPaginationHeaders(c, page, total, hasNext);
  return c.json(rows.map((row) => toEvent(row, config)));
}

async function feedFilters(c: Context): Promise<ActivityFilters> {
  const p = await params(c, feedShape);
  return { action: p.action, targetType: p.target_type, before: p.before, after: p.after, sort: p.sort };
}

/** GitLab's API::Events: a user's own activity, another user's, a project's. */
export const eventRoutes = new Hono<AppEnv>()
  .get('/events', documented({ summary: "List the current user's events", params: feedShape, responses: { 200: 'Event[]' } }), async (c) => {
    // GitLab: allow_access_with_scope :read_user for GETs, then authenticate!.
    const auth = await requireUser(c, USER_SCOPES(c));
    const filters = await feedFilters(c);
    return presentFeed(c, { authorId: auth.user.id }, viewerOf(auth.user, today(c)), filters);
  })

  .get('/users/:id/events', documented({ summary: "List a user's events", params: feedShape, auth: 'optional', responses: { 200: 'Event[]', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c, USER_SCOPES(c));
    const filters = await feedFilters(c);
    const user = await findUserByIdOrUsername(appContext(c).db, c.req.param('id'));
    if (!user) throw notFound('User');
    const viewer = viewerOf(auth.user, today(c));
    // GitLab's EventsFinder: Event.none when the caller may not read the user's profile.
    if (!canReadUserProfile(user, viewer)) {
      setPaginationHeaders(c, await pageOf(c), 0);
      return c.json([]);
    }
    return presentFeed(c, { authorId: user.id }, viewer, filters);
  })

  .get('/projects/:id/events', documented({ summary: "List a project's events", params: feedShape, auth: 'optional', responses: { 200: 'Event[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const filters = await feedFilters(c);
    const project = await userProject(c, auth, 'read_project');
    return presentFeed(c, { projectId: project.row.id }, viewerOf(auth.user, today(c)), filters);
  });
