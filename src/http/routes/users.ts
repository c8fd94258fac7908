import { Hono } from 'hono';
import { sql } from 'kysely';
import { avatarUpload } from '../../commands/uploads.js';
import { createUser, updateUser } from '../../commands/users.js';
import { licensed } from '../../domain/policy/licensed.js';
import { isBlank, type ProfileChanges, type UserProfile } from '../../domain/users.js';
import { customAttributesByUser, listCustomAttributes } from '../../projections/users/custom-attributes.js';
import { toUser, toUserBasic, toUserWithAdmin } from '../entities/users.js';
import { USER_SCOPES, authenticate, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { conflict, forbidden } from '../../domain/errors.js';
import { paginate } from '../kernel/pagination.js';
import { optional, rawParams, required, t, withDefault, declaration, atLeastOneOf, allOrNoneOf, type Shape } from '../kernel/params.js';
import { optionalAttributes, eeAttributes, listParams, profileChanges } from './users/declarations.js';
import { userIdFromPath, existingUser, mustBeAdmin, searchUsers, soleOwnedGroupCount, type UserQuery } from './users/lookup.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { currentUserRoutes } from './users/status.js';
import { userCustomAttributeRoutes } from './users/custom-attributes.js';
import { userTokenRoutes } from './users/tokens.js';
import { users } from '../../domain/users/aggregate.js';
import { run } from '../../commands/kernel/run.js';

const showShape = { with_custom_attributes: withDefault(t.boolean(), false) } satisfies Shape;
const createHeadShape = {
  email: required(t.string()),
  password: optional(t.string()),
  reset_password: optional(t.boolean()),
  skip_confirmation: optional(t.boolean()),
} satisfies Shape;
const createBodyShape = { name: required(t.string()), username: required(t.string()), force_random_password: optional(t.boolean()), ...optionalAttributes } satisfies Shape;
const updateShape = {
  email: optional(t.string()),
  password: optional(t.string()),
  skip_reconfirmation: optional(t.boolean()),
  name: optional(t.string()),
  username: optional(t.string()),
  ...optionalAttributes,
} satisfies Shape;
const deleteShape = { hard_delete: optional(t.boolean()) } satisfies Shape;
/** The user's id: anything else is no route (404). */
const ON_USER = { pathIds: ['id'] } as const;

export const userRoutes = new Hono<AppEnv>()
  .get('/users', documented({ summary: 'List users', params: listParams, auth: 'optional', responses: { 200: ['UserBasic[]', 'UserWithAdmin[]'], 403: 'Error' } }), async (c) => {
    const auth = await authenticate(c, USER_SCOPES(c));
    const { db, config } = appContext(c);
    const raw = await rawParams(c);
    const declared = declaration(raw);
    const p = declared.parse(listParams);
    declared.check(allOrNoneOf(raw, ['extern_uid', 'provider']));
    declared.done();
    const admin = auth.user?.is_admin ?? false;

    // GitLab: the external and extern_uid+provider filters are for administrators.
    if (p.external || (!isBlank(p.extern_uid) && !isBlank(p.provider))) mustBeAdmin(auth);
    // GitLab: anonymous callers must name a username (an exact match, so 0 or 1 users).
    if (!auth.user && isBlank(p.username)) throw forbidden('Not authorized to access /api/v4/users');

    let query: UserQuery = db.selectFrom('users').selectAll();
    if (p.username !== undefined) query = query.where(sql<boolean>`lower(username) = ${p.username.toLowerCase()}`);
    let searchTerm: string | undefined;
    if (!isBlank(p.search)) {
      const searched = searchUsers(query, p.search!);
      if (!searched) query = query.where(sql<boolean>`false`);
      else ({ query, term: searchTerm } = searched);
    }
    if (p.blocked) query = query.where('state', '=', 'blocked');
    if (p.active) query = query.where('state', '=', 'active');
    if (admin && p.extern_uid !== undefined && p.provider !== undefined) {
      query = query.where(
        sql<boolean>`exists (select 1 from jsonb_array_elements(users.identities) i where i->>'provider' = ${p.provider} and lower(i->>'extern_uid') = ${p.extern_uid.toLowerCase()})`,
      );
    }
    if (p.external) query = query.where('external', '=', true);
    // GitLab: two_factor, created_before/after, order_by and sort only count for administrators.
    if (admin) {
      if (raw.two_factor === 'enabled' || raw.two_factor === 'disabled') query = query.where('two_factor_enabled', '=', raw.two_factor === 'enabled');
      if (p.created_before) query = query.where('created_at', '<=', p.created_before);
      if (p.created_after) query = query.where('created_at', '>=', p.created_after);
      // GitLab: custom_attributes[key]=value filters only for administrators, silently ignored otherwise.
      const wanted = raw.custom_attributes;
      if (wanted && typeof wanted === 'object' && !Array.isArray(wanted)) {
        for (const [key, value] of Object.entries(wanted as Record<string, unknown>)) {
          query = query.where(
            sql<boolean>`exists (select 1 from user_custom_attributes a where a.user_id = users.id and a.key = ${key} and a.value = ${String(value)})`,
          );
        }
      }
    }

    const rows = await paginate(c, query, (q) => {
      if (admin) return p.order_by === 'id' ? q.orderBy('id', p.sort) : q.orderBy(p.order_by, p.sort).orderBy('id', p.sort);
      // GitLab: a search ranks exact name, username, email matches first, then by name.
      if (searchTerm !== undefined) {
        const t = searchTerm;
        return q
          .orderBy(sql`case when name = ${t} then 0 when username = ${t} then 1 when lower(email) = ${t} then 2 else 3 end`)
          .orderBy('name')
          .orderBy('id');
      }
      return q.orderBy('id', 'desc');
    });
    if (!admin) return c.json(rows.map((row) => toUserBasic(row, config)));
    const attributes = p.with_custom_attributes ? await customAttributesByUser(db, rows.map((row) => row.id)) : undefined;
    return c.json(rows.map((row) => toUserWithAdmin(row, config, { customAttributes: attributes?.get(row.id) })));
  })

  .get('/users/:id', documented({ summary: 'Get a user', params: showShape, ...ON_USER, auth: 'optional', responses: { 200: ['User', 'UserWithAdmin'], 404: 'Error' } }), async (c) => {
    const id = userIdFromPath(c);
    const auth = await authenticate(c, USER_SCOPES(c));
    const p = declaration(await rawParams(c));
    const { with_custom_attributes } = p.parse(showShape);
    p.done();
    const user = await existingUser(c, id);
    const { config, db } = appContext(c);
    if (!auth.user?.is_admin) return c.json(toUser(user, config, { viewer: auth.user }));
    const customAttributes = with_custom_attributes ? await listCustomAttributes(db, user.id) : undefined;
    return c.json(toUserWithAdmin(user, config, { viewer: auth.user, customAttributes }));
  })

  .post(
    '/users',
    documented({ summary: 'Create a user', params: { ...createHeadShape, ...createBodyShape, ...eeAttributes }, auth: 'admin', responses: { 201: 'UserWithAdmin', 403: 'Error', 409: 'Error' } }),
    async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const declared = declaration(raw);
    const head = declared.parse(createHeadShape);
    declared.check(atLeastOneOf(raw, ['password', 'reset_password', 'force_random_password']));
    const body = declared.parse(createBodyShape);
    declared.check(allOrNoneOf(raw, ['extern_uid', 'provider']));
    const ee = declared.parse(eeAttributes);
    declared.done();
    mustBeAdmin(w.auth);
    const avatar = await avatarUpload(body.avatar);

    const { config } = appContext(c);
    const profile = profileChanges({ ...head, ...body, ...ee }, undefined, licensed(config.plan, 'ee')) as ProfileChanges & Pick<UserProfile, 'name' | 'username' | 'email'>;
    const result = await createUser(
      w,
      {
        profile,
        password: head.password,
        randomPassword: Boolean(head.reset_password || body.force_random_password),
        skipConfirmation: head.skip_confirmation ?? false,
        avatar,
      },
    );
    return c.json(toUserWithAdmin(await existingUser(c, result.state.id!), config), 201);
  },
  )

  .put('/users/:id', documented({ summary: 'Update a user', params: { ...updateShape, ...eeAttributes }, ...ON_USER, auth: 'admin', responses: { 200: 'UserWithAdmin', ...REFUSED, 409: 'Error' } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const declared = declaration(raw);
    const head = declared.parse(updateShape);
    declared.check(allOrNoneOf(raw, ['extern_uid', 'provider']));
    const ee = declared.parse(eeAttributes);
    declared.done();
    mustBeAdmin(w.auth);

    const user = await existingUser(c, id);
    const avatar = await avatarUpload(head.avatar);
    const { config } = appContext(c);
    await updateUser(w, id, profileChanges({ ...head, ...ee }, user, licensed(config.plan, 'ee')), head.password, {
      skipReconfirmation: head.skip_reconfirmation ?? false,
      avatar,
    });
    return c.json(toUserWithAdmin(await existingUser(c, id), config));
  })

  .delete('/users/:id', documented({ summary: 'Delete a user', params: deleteShape, ...ON_USER, auth: 'admin', responses: { 204: null, ...REFUSED, 409: 'Error', 412: 'Error' } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c);
    const declared = declaration(await rawParams(c));
    const p = declared.parse(deleteShape);
    declared.done();
    mustBeAdmin(w.auth);
    const user = await existingUser(c, id);
    const soleOwner = await soleOwnedGroupCount(c, id);
    if (soleOwner > 0 && !p.hard_delete) throw conflict('User cannot be removed while is the sole-owner of a group');
    checkUnmodifiedSince(c, user.updated_at);
    await run(w, users, id, { type: 'DeleteUser', hardDelete: p.hard_delete ?? false, soleOwnerOfGroups: soleOwner });
    return c.body(null, 204);
  })

  // GitLab: `user.block` / `user.activate` — the answer is whether the state changed.
  .post('/users/:id/block', documented({ summary: 'Block a user: whether its state changed', ...ON_USER, auth: 'admin', responses: { 201: { type: 'boolean' }, ...REFUSED } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c);
    mustBeAdmin(w.auth);
    await existingUser(c, id);
    const result = await run(w, users, id, { type: 'BlockUser' });
    return c.json(result.events.length > 0, 201);
  })

  .post('/users/:id/unblock', documented({ summary: 'Unblock a user: whether its state changed', ...ON_USER, auth: 'admin', responses: { 201: { type: 'boolean' }, ...REFUSED } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c);
    mustBeAdmin(w.auth);
    await existingUser(c, id);
    const result = await run(w, users, id, { type: 'UnblockUser' });
    return c.json(result.events.length > 0, 201);
  })
  .route('/', currentUserRoutes)
  .route('/', userCustomAttributeRoutes)
  .route('/', userTokenRoutes);
