import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { MemberSourceType } from '../../domain/access.js';
import type { OwnerGuard } from '../../domain/members.js';
import { can } from '../../domain/policy/can.js';
import {
  activeMemberUserIds,
  activeOwnerCount,
  allMembersQuery,
  directMembersQuery,
  highestGroupMembership,
  type MemberFilters,
  type MemberSource,
} from '../../projections/members/members.js';
import { findUserById } from '../../projections/users/queries.js';
import { toMember } from '../entities/members.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { conflict, forbidden, notFound, paramErrors, recordNotFound } from '../../domain/errors.js';
import { paginate } from '../kernel/pagination.js';
import { optional, params, rawParams, required, t } from '../kernel/params.js';
import { userGroup, userProject } from '../kernel/scope.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { members } from '../../domain/members.js';
import { run } from '../../commands/kernel/run.js';

// ───────────────────────────── Sources ─────────────────────────────

/** The two kinds of membership source: `/groups/:id/…` and `/projects/:id/…`. */
export const SOURCE_KINDS = [
  { plural: 'groups', type: 'Namespace' },
  { plural: 'projects', type: 'Project' },
] as const satisfies readonly { plural: string; type: MemberSourceType }[];

/**
 * A group or project the caller may see (the kernel's userGroup / userProject), with what the
 * members endpoints need of it and the abilities they ask, by the source's GitLab names.
 */
export interface ResolvedSource extends MemberSource {
  readonly name: string;
  /** Groups a membership may be inherited from (the ancestors; a project's namespace chain). */
  readonly inheritFrom: readonly number[];
  /** A personal project's namespace owner. */
  readonly personalOwnerId: number | null;
  /** admin_group_member / admin_project_member: add, update, approve, list requests. */
  readonly canManage: boolean;
  /** request_access */
  readonly canRequestAccess: boolean;
  /** destroy_group_member / destroy_project_member: remove a member, deny or withdraw a request. */
  canDestroyMember(userId: number): boolean;
}

/** `:id` of a groups or projects path, resolved for the caller; 404 when not visible. */
export async function resolveSource(c: Context, auth: Auth, type: MemberSourceType): Promise<ResolvedSource> {
  if (type === 'Namespace') {
    const { row, subject: group } = await userGroup(c, auth);
    return {
      type,
      id: row.id,
      traversalIds: row.traversal_ids,
      name: row.name,
      inheritFrom: row.traversal_ids.filter((groupId) => groupId !== row.id),
      personalOwnerId: null,
      canManage: can(group, 'admin_group_member'),
      canRequestAccess: can(group, 'request_access'),
      canDestroyMember: (userId) => can({ kind: 'group_member', group, userId }, 'destroy_group_member'),
    };
  }
  const { row, subject: project } = await userProject(c, auth);
  const { personalOwnerId } = project;
  const personal = personalOwnerId !== null;
  return {
    type,
    id: row.id,
    // Personal namespaces have no members: only a group chain passes memberships down.
    traversalIds: personal ? [] : row.traversal_ids,
    name: row.name,
    inheritFrom: personal ? [] : row.traversal_ids,
    personalOwnerId,
    canManage: can(project, 'admin_project_member'),
    canRequestAccess: can(project, 'request_access'),
    canDestroyMember: (userId) => can({ kind: 'project_member', project, userId }, 'destroy_project_member'),
  };
}

/** What the owner invariants need, read now (see OwnerGuard). */
export async function ownerGuard(c: Context, source: ResolvedSource): Promise<OwnerGuard> {
  const { db } = appContext(c);
  return {
    ancestorOwners: source.type === 'Namespace' ? await activeOwnerCount(db, source.inheritFrom) : 0,
    activeUserIds: await activeMemberUserIds(db, source),
    personalOwnerId: source.personalOwnerId,
  };
}

/** `:user_id` is an Integer parameter: anything else is Grape's "user_id is invalid". */
export function userIdParam(c: Context): number {
  const value = c.req.param('user_id') ?? '';
  if (!/^\d+$/.test(value) || Number(value) > 2147483647) throw paramErrors(['user_id is invalid']);
  return Number(value);
}

/** A DateTime parameter stored in a date column (`expires_at`): its UTC date. */
const toDate = (value: Date) => value.toISOString().slice(0, 10);

// ───────────────────────────── Parameters ─────────────────────────────

const listParams = {
  query: optional(t.string()),
  user_ids: optional(t.array(t.integer())),
};

/** Grape coerces an empty DateTime to nil: `expires_at=` clears the date. */
const clearableDatetime = () => z.preprocess((v) => (v === '' ? undefined : v), t.datetime().optional());

const createParams = {
  user_id: required(t.integer()),
  access_level: required(t.integer()),
  expires_at: optional(clearableDatetime()),
};

const updateParams = {
  access_level: required(t.integer()),
  expires_at: optional(clearableDatetime()),
};

// ───────────────────────────── Routes ─────────────────────────────

/** `requires :user_id, type: Integer` (userIdParam). */
const ON_MEMBER = { pathIds: ['user_id'] } as const;

/** GET/POST/PUT/DELETE /groups/:id/members… and /projects/:id/members… (GitLab's API::Members). */
export const memberRoutes = new Hono<AppEnv>();

for (const { plural, type } of SOURCE_KINDS) {
  const base = `/${plural}/:id/members`;

  async function list(c: Context, deep: boolean) {
    // GitLab: `before { authenticate! }` — even public sources need a signed-in caller.
    const auth = await requireUser(c);
    const p = await params(c, listParams);
    const source = await resolveSource(c, auth, type);
    const { db, config } = appContext(c);
    const filters: MemberFilters = { query: p.query, userIds: p.user_ids };
    const rows = deep
      ? await paginate(c, allMembersQuery(db, source, filters), (q) => q.orderBy('m.created_at').orderBy('users.id'))
      : await paginate(c, directMembersQuery(db, source, filters), (q) => q.orderBy('m.created_at').orderBy('users.id'));
    return c.json(rows.map((row) => toMember(row, config)));
  }

  async function one(c: Context, deep: boolean) {
    const auth = await requireUser(c);
    const userId = userIdParam(c);
    const source = await resolveSource(c, auth, type);
    const { db, config } = appContext(c);
    const query = deep ? allMembersQuery(db, source, { userId }) : directMembersQuery(db, source, { userId });
    const row = await query.executeTakeFirst();
    if (!row) throw recordNotFound();
    return c.json(toMember(row, config));
  }

  const of = plural === 'groups' ? 'a group' : 'a project';
  memberRoutes
    .get(base, documented({ summary: `List the members of ${of}`, params: listParams, responses: { 200: 'Member[]', 404: 'Error' } }), (c) => list(c, false))
    .get(`${base}/all`, documented({ summary: `List the members of ${of}, inherited ones included`, params: listParams, responses: { 200: 'Member[]', 404: 'Error' } }), (c) =>
      list(c, true),
    )
    .get(`${base}/all/:user_id`, documented({ summary: `Get a member of ${of}, inherited ones included`, ...ON_MEMBER, responses: { 200: 'Member', 404: 'Error' } }), (c) => one(c, true))
    .get(`${base}/:user_id`, documented({ summary: `Get a member of ${of}`, ...ON_MEMBER, responses: { 200: 'Member', 404: 'Error' } }), (c) => one(c, false))

    .post(base, documented({ summary: `Add a member to ${of}`, params: createParams, responses: { 201: 'Member', ...REFUSED, 409: 'Error' } }), async (c) => {
      const w = await requireWriter(c);
      const p = await params(c, createParams);
      const source = await resolveSource(c, w.auth, type);
      if (!source.canManage) throw forbidden();
      const { db, config } = appContext(c);
      if (await directMembersQuery(db, source, { userId: p.user_id }).executeTakeFirst()) {
        throw conflict('Member already exists');
      }
      if (!(await findUserById(db, p.user_id))) throw notFound('User');
      const inherited = await highestGroupMembership(db, source.inheritFrom, p.user_id);
      const expiresAt = p.expires_at === undefined ? null : toDate(p.expires_at);
      await run(
        w,
        members,
        source,
        { type: 'AddMember', userId: p.user_id, accessLevel: p.access_level, expiresAt, inherited, actorId: w.auth.user.id },
      );
      const row = await directMembersQuery(db, source, { userId: p.user_id }).executeTakeFirstOrThrow();
      return c.json(toMember(row, config), 201);
    })

    .put(`${base}/:user_id`, documented({ summary: `Update a member of ${of}`, params: updateParams, ...ON_MEMBER, responses: { 200: 'Member', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const userId = userIdParam(c);
      const given = (await rawParams(c)).expires_at;
      const p = await params(c, updateParams);
      const source = await resolveSource(c, w.auth, type);
      if (!source.canManage) throw forbidden();
      const { db, config } = appContext(c);
      if (!(await directMembersQuery(db, source, { userId }).executeTakeFirst())) throw recordNotFound();
      // An empty expires_at clears the date; an absent one keeps it.
      const expiresAt = p.expires_at !== undefined ? toDate(p.expires_at) : given === '' || given === null ? null : undefined;
      const inherited = await highestGroupMembership(db, source.inheritFrom, userId);
      const guard = await ownerGuard(c, source);
      await run(w, members, source, { type: 'UpdateMember', userId, accessLevel: p.access_level, expiresAt, inherited, guard });
      const row = await directMembersQuery(db, source, { userId }).executeTakeFirstOrThrow();
      return c.json(toMember(row, config));
    })

    .delete(`${base}/:user_id`, documented({ summary: `Remove a member of ${of}`, ...ON_MEMBER, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
      const w = await requireWriter(c);
      const userId = userIdParam(c);
      const source = await resolveSource(c, w.auth, type);
      const { db } = appContext(c);
      const member = await directMembersQuery(db, source, { userId }).executeTakeFirst();
      if (!member) throw recordNotFound();
      checkUnmodifiedSince(c, member.updated_at);
      // GitLab's member policies: managers remove anybody, a member may leave.
      if (!source.canDestroyMember(userId)) throw forbidden();
      const guard = await ownerGuard(c, source);
      await run(w, members, source, { type: 'RemoveMember', userId, actorId: w.auth.user.id, guard });
      return c.body(null, 204);
    });
}
