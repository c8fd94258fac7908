import { Hono } from 'hono';
import { DEFAULT_ACCESS_LEVEL, members } from '../../domain/members.js';
import { accessRequestsQuery } from '../../projections/members/access-requests.js';
import { directMembersQuery, highestGroupMembership } from '../../projections/members/members.js';
import { toAccessRequester, toMember } from '../entities/members.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { forbidden, recordNotFound } from '../../domain/errors.js';
import { paginate } from '../kernel/pagination.js';
import { params, t, withDefault } from '../kernel/params.js';
import { SOURCE_KINDS, resolveSource, userIdParam } from './members.js';
import { run } from '../../commands/kernel/run.js';

const approveParams = {
  access_level: withDefault(t.integer(), DEFAULT_ACCESS_LEVEL as number),
};

/** GET/POST/PUT/DELETE /groups/:id/access_requests… and /projects/… (GitLab's API::AccessRequests). */
export const accessRequestRoutes = new Hono<AppEnv>();

for (const { plural, type } of SOURCE_KINDS) {
  const base = `/${plural}/:id/access_requests`;

  const of = plural === 'groups' ? 'a group' : 'a project';
  accessRequestRoutes
    .get(base, documented({ summary: `List the access requests of ${of}`, responses: { 200: 'AccessRequester[]', ...REFUSED } }), async (c) => {
      const auth = await requireUser(c);
      const source = await resolveSource(c, auth, type);
      // GitLab: AccessRequestsFinder#execute! — admin_group / admin_project, else 403.
      if (!source.canManage) throw forbidden();
      const { db, config } = appContext(c);
      const rows = await paginate(c, accessRequestsQuery(db, source), (q) => q.orderBy('r.requested_at').orderBy('users.id'));
      return c.json(rows.map((row) => toAccessRequester(row, config)));
    })

    .post(base, documented({ summary: `Request access to ${of}`, responses: { 201: 'AccessRequester', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const source = await resolveSource(c, w.auth, type);
      if (!source.canRequestAccess) throw forbidden();
      const { db, config } = appContext(c);
      await run(w, members, source, { type: 'RequestAccess', userId: w.auth.user.id });
      const row = await accessRequestsQuery(db, source).where('r.user_id', '=', w.auth.user.id).executeTakeFirstOrThrow();
      return c.json(toAccessRequester(row, config), 201);
    })

    .put(`${base}/:user_id/approve`, documented({ summary: `Approve an access request to ${of}`, params: approveParams, pathIds: ['user_id'], responses: { 201: 'Member', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const userId = userIdParam(c);
      const p = await params(c, approveParams);
      const source = await resolveSource(c, w.auth, type);
      const { db, config } = appContext(c);
      // GitLab: requesters.find_by! (404) comes before the update_member permission (403).
      if (!(await accessRequestsQuery(db, source).where('r.user_id', '=', userId).executeTakeFirst())) throw recordNotFound();
      if (!source.canManage) throw forbidden();
      const inherited = await highestGroupMembership(db, source.inheritFrom, userId);
      const approval = { type: 'ApproveAccessRequest', userId, accessLevel: p.access_level, inherited, actorId: w.auth.user.id } as const;
      await run(w, members, source, approval);
      const row = await directMembersQuery(db, source, { userId }).executeTakeFirstOrThrow();
      return c.json(toMember(row, config), 201);
    })

    .delete(`${base}/:user_id`, documented({ summary: `Deny an access request to ${of}`, pathIds: ['user_id'], responses: { 204: null, ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const userId = userIdParam(c);
      const source = await resolveSource(c, w.auth, type);
      const { db } = appContext(c);
      if (!(await accessRequestsQuery(db, source).where('r.user_id', '=', userId).executeTakeFirst())) throw recordNotFound();
      // GitLab: managers deny; requesters withdraw their own request.
      if (!source.canDestroyMember(userId)) throw forbidden();
      await run(w, members, source, { type: 'DenyAccessRequest', userId, actorId: w.auth.user.id });
      return c.body(null, 204);
    });
}
