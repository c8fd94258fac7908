import { Hono, type Context } from 'hono';
import { sql } from 'kysely';
import {
  blockUser,
  createPersonalAccessToken,
  createUser,
  deleteUser,
  revokePersonalAccessToken,
  setUserStatus,
  unblockUser,
  updateUser,
} from '../../commands/users.js';
import { TOKEN_SCOPES, type ProfileChanges, type UserProfile } from '../../domain/users.js';
import { findUserById, findUserByIdOrUsername, type UserRow } from '../../projections/users.js';
import { toAccessToken, toUser, toUserBasic, toUserPublic, toUserStatus, toUserWithAdmin } from '../entities/users.js';
import { USER_SCOPES, authenticate, eventMetadata, requireAdmin, requireUser } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { ApiError, forbidden, notFound } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { optional, params, required, t, withDefault } from '../kernel/params.js';

// ───────────────────────────── Parameters ─────────────────────────────

const profileParams = {
  skype: optional(t.string()),
  linkedin: optional(t.string()),
  twitter: optional(t.string()),
  website_url: optional(t.string()),
  organization: optional(t.string()),
  projects_limit: optional(t.integer()),
  extern_uid: optional(t.string()),
  provider: optional(t.string()),
  bio: optional(t.string()),
  location: optional(t.string()),
  public_email: optional(t.string()),
  admin: optional(t.boolean()),
  can_create_group: optional(t.boolean()),
  external: optional(t.boolean()),
  avatar: optional(t.file()),
  theme_id: optional(t.integer()),
  color_scheme_id: optional(t.integer()),
  private_profile: optional(t.boolean()),
  shared_runners_minutes_limit: optional(t.integer()),
  extra_shared_runners_minutes_limit: optional(t.integer()),
};

const createParams = {
  email: required(t.string()),
  password: optional(t.string()),
  reset_password: optional(t.boolean()),
  force_random_password: optional(t.boolean()),
  skip_confirmation: optional(t.boolean()),
  name: required(t.string()),
  username: required(t.string()),
  ...profileParams,
};

const updateParams = {
  email: optional(t.string()),
  password: optional(t.string()),
  name: optional(t.string()),
  username: optional(t.string()),
  skip_reconfirmation: optional(t.boolean()),
  group_id_for_saml: optional(t.integer()),
  note: optional(t.string()),
  ...profileParams,
};

const listParams = {
  username: optional(t.string()),
  search: optional(t.string()),
  active: optional(t.boolean()),
  blocked: optional(t.boolean()),
  external: optional(t.boolean()),
  extern_uid: optional(t.string()),
  provider: optional(t.string()),
  created_before: optional(t.datetime()),
  created_after: optional(t.datetime()),
  with_custom_attributes: withDefault(t.boolean(), false),
  order_by: withDefault(t.values(['id', 'name', 'username', 'created_at', 'updated_at']), 'id'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
  two_factor: optional(t.values(['enabled', 'disabled'])),
};

type ProfileInput = { [K in keyof typeof profileParams]?: unknown } & Record<string, unknown>;

/** Maps GitLab's request fields onto the profile (admin → is_admin, extern_uid+provider → identities). */
function profileChanges(input: ProfileInput, current: UserRow | undefined, paidTier: boolean): ProfileChanges {
  const changes: Record<string, unknown> = {};
  const fields: (keyof UserProfile)[] = [
    'name', 'username', 'email', 'skype', 'linkedin', 'twitter', 'website_url', 'organization', 'bio', 'location',
    'public_email', 'projects_limit', 'can_create_group', 'external', 'private_profile', 'theme_id', 'color_scheme_id',
  ];
  for (const field of fields) if (input[field] !== undefined) changes[field] = input[field];
  if (input.admin !== undefined) changes.is_admin = input.admin;
  if (paidTier) {
    for (const field of ['note', 'shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit'] as const) {
      if (input[field] !== undefined) changes[field] = input[field];
    }
  }
  if (typeof input.extern_uid === 'string' && typeof input.provider === 'string') {
    const identities = (current?.identities ?? []).filter((identity) => identity.provider !== input.provider);
    changes.identities = [...identities, { provider: input.provider, extern_uid: input.extern_uid }];
  }
  return changes as ProfileChanges;
}

// ───────────────────────────── Helpers ─────────────────────────────

/** `:id` of the users endpoints is an integer; anything else is a parameter error. */
function userIdParam(c: Context, name = 'id'): number {
  const value = c.req.param(name) ?? '';
  if (!/^\d+$/.test(value) || Number(value) > 2147483647) throw new ApiError(400, { error: `${name} is invalid` });
  return Number(value);
}

async function existingUser(c: Context, id: number): Promise<UserRow> {
  const user = await findUserById(appContext(c).db, id);
  if (!user) throw notFound('User');
  return user;
}

const today = (c: Context) => appContext(c).commands.now().toISOString().slice(0, 10);

/** GitLab's single-line markdown of a status message: escaped text. */
const statusHtml = (message: string) =>
  message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

// ───────────────────────────── Routes ─────────────────────────────

export const userRoutes = new Hono<AppEnv>()
  .get('/users', async (c) => {
    const auth = await authenticate(c, USER_SCOPES(c));
    const { db, config } = appContext(c);
    const p = await params(c, listParams);
    const admin = auth.user?.is_admin ?? false;
    // GitLab: external and extern_uid+provider filters are for administrators.
    if ((p.external !== undefined || (p.extern_uid !== undefined && p.provider !== undefined)) && !admin) {
      if (!auth.user) throw new ApiError(401, { message: '401 Unauthorized' });
      throw forbidden();
    }
    // GitLab: anonymous callers must name a username (an exact match, so 0 or 1 users).
    if (!auth.user && p.username === undefined) throw forbidden('Not authorized to access /api/v4/users');

    let query = db.selectFrom('users').selectAll();
    if (p.username !== undefined) query = query.where(sql<boolean>`lower(username) = ${p.username.toLowerCase()}`);
    if (p.search !== undefined && p.search !== '') {
      const like = `%${p.search.replace(/[\\%_]/g, '\\$&')}%`;
      query = query.where((eb) => eb.or([eb('name', 'ilike', like), eb('username', 'ilike', like), eb(eb.fn('lower', ['email']), '=', p.search!.toLowerCase())]));
    }
    if (p.active) query = query.where('state', '=', 'active');
    if (p.blocked) query = query.where('state', '=', 'blocked');
    if (p.external) query = query.where('external', '=', true);
    if (p.extern_uid !== undefined && p.provider !== undefined) {
      query = query.where(sql<boolean>`identities @> ${JSON.stringify([{ provider: p.provider, extern_uid: p.extern_uid }])}::jsonb`);
    }
    // GitLab: ordering, creation dates and two-factor filters only for administrators.
    const orderBy = admin ? p.order_by : 'id';
    const sort = admin ? p.sort : 'desc';
    if (admin) {
      if (p.created_before) query = query.where('created_at', '<', p.created_before);
      if (p.created_after) query = query.where('created_at', '>', p.created_after);
      if (p.two_factor) query = query.where('two_factor_enabled', '=', p.two_factor === 'enabled');
    }
    const rows = await paginate(c, query, (q) => (orderBy === 'id' ? q.orderBy('id', sort) : q.orderBy(orderBy, sort).orderBy('id', sort)));
    return c.json(rows.map((row) => (admin ? toUserWithAdmin(row, config) : toUserBasic(row, config))));
  })

  .get('/users/:id', async (c) => {
    const auth = await authenticate(c, USER_SCOPES(c));
    const user = await existingUser(c, userIdParam(c));
    const { config } = appContext(c);
    return c.json(auth.user?.is_admin ? toUserWithAdmin(user, config) : toUser(user, config));
  })

  .post('/users', async (c) => {
    const auth = await requireAdmin(c);
    const p = await params(c, createParams, { atLeastOneOf: [['password', 'reset_password', 'force_random_password']] });
    const { commands, config } = appContext(c);
    const profile = profileChanges(p, undefined, config.plan !== 'free') as ProfileChanges & Pick<UserProfile, 'name' | 'username' | 'email'>;
    const result = await createUser(
      commands,
      {
        profile,
        password: p.password,
        randomPassword: Boolean(p.reset_password || p.force_random_password),
        skipConfirmation: p.skip_confirmation ?? false,
      },
      eventMetadata(c, auth),
    );
    return c.json(toUserWithAdmin(await existingUser(c, result.state.id!), config), 201);
  })

  .put('/users/:id', async (c) => {
    const auth = await requireAdmin(c);
    const id = userIdParam(c);
    const p = await params(c, updateParams);
    const user = await existingUser(c, id);
    const { commands, config } = appContext(c);
    await updateUser(commands, id, profileChanges(p, user, config.plan !== 'free'), p.password, eventMetadata(c, auth));
    return c.json(toUserWithAdmin(await existingUser(c, id), config));
  })

  .delete('/users/:id', async (c) => {
    const auth = await requireAdmin(c);
    const id = userIdParam(c);
    const p = await params(c, { hard_delete: optional(t.boolean()) });
    const user = await existingUser(c, id);
    checkUnmodifiedSince(c, user.updated_at);
    const { commands } = appContext(c);
    await deleteUser(commands, id, p.hard_delete ?? false, await soleOwnedGroupCount(c, id), eventMetadata(c, auth));
    return c.body(null, 204);
  })

  .post('/users/:id/block', async (c) => {
    const auth = await requireAdmin(c);
    const id = userIdParam(c);
    await existingUser(c, id);
    await blockUser(appContext(c).commands, id, eventMetadata(c, auth));
    return c.json(true, 201);
  })

  .post('/users/:id/unblock', async (c) => {
    const auth = await requireAdmin(c);
    const id = userIdParam(c);
    await existingUser(c, id);
    await unblockUser(appContext(c).commands, id, eventMetadata(c, auth));
    return c.json(true, 201);
  })

  .get('/user', async (c) => {
    const auth = await requireUser(c, USER_SCOPES(c));
    const { config } = appContext(c);
    return c.json(auth.user.is_admin ? toUserWithAdmin(auth.user, config) : toUserPublic(auth.user, config));
  })

  .get('/user/status', async (c) => {
    const auth = await requireUser(c, USER_SCOPES(c));
    return c.json(toUserStatus(auth.user));
  })

  .put('/user/status', async (c) => {
    const auth = await requireUser(c);
    const p = await params(c, { emoji: optional(t.string()), message: optional(t.string()) });
    const emoji = p.emoji ?? '';
    const message = p.message ?? '';
    const errors: Record<string, string[]> = {};
    if (message.length > 100) errors.message = ['is too long (maximum is 100 characters)'];
    if (emoji !== '' && !/^[a-z0-9_+-]+$/.test(emoji)) errors.emoji = ['is not included in the list'];
    if (Object.keys(errors).length > 0) return c.json({ message: errors }, 400);
    // GitLab: with a message but no emoji, the emoji defaults to speech_balloon; both blank clears.
    const clearing = emoji === '' && message === '';
    await setUserStatus(
      appContext(c).commands,
      auth.user.id,
      { emoji: clearing ? '' : emoji || 'speech_balloon', message, messageHtml: statusHtml(message) },
      eventMetadata(c, auth),
    );
    return c.json(toUserStatus(await existingUser(c, auth.user.id)));
  })

  .get('/users/:id_or_username/status', async (c) => {
    await authenticate(c, USER_SCOPES(c));
    const user = await findUserByIdOrUsername(appContext(c).db, c.req.param('id_or_username'));
    if (!user) throw notFound('User');
    return c.json(toUserStatus(user));
  })

  // ───────────── Impersonation and personal access tokens (admin) ─────────────

  .get('/users/:user_id/impersonation_tokens', async (c) => {
    await requireAdmin(c);
    const id = userIdParam(c, 'user_id');
    const p = await params(c, { state: withDefault(t.values(['all', 'active', 'inactive']), 'all') });
    await existingUser(c, id);
    const { db } = appContext(c);
    const now = today(c);
    let query = db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', id).where('impersonation', '=', true);
    if (p.state === 'active') query = query.where('revoked', '=', false).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    if (p.state === 'inactive') query = query.where((eb) => eb.or([eb('revoked', '=', true), eb('expires_at', '<=', now)]));
    const rows = await paginate(c, query, (q) => q.orderBy('id', 'asc'));
    return c.json(rows.map((row) => toAccessToken(row, now)));
  })

  .post('/users/:user_id/impersonation_tokens', (c) => createToken(c, true))
  .post('/users/:user_id/personal_access_tokens', (c) => createToken(c, false))

  .get('/users/:user_id/impersonation_tokens/:impersonation_token_id', async (c) => {
    await requireAdmin(c);
    const { user, token } = await impersonationToken(c);
    void user;
    return c.json(toAccessToken(token, today(c)));
  })

  .delete('/users/:user_id/impersonation_tokens/:impersonation_token_id', async (c) => {
    const auth = await requireAdmin(c);
    const { user, token } = await impersonationToken(c);
    await revokePersonalAccessToken(appContext(c).commands, user.id, token.id, true, eventMetadata(c, auth));
    return c.body(null, 204);
  });

async function createToken(c: Context, impersonation: boolean) {
  const auth = await requireAdmin(c);
  const id = userIdParam(c, 'user_id');
  const p = await params(c, {
    name: required(t.string()),
    expires_at: optional(t.date()),
    scopes: required(t.array(t.values(TOKEN_SCOPES as unknown as [string, ...string[]]))),
  });
  await existingUser(c, id);
  const { commands, db } = appContext(c);
  const { token, tokenId } = await createPersonalAccessToken(
    commands,
    id,
    { name: p.name, scopes: p.scopes as (typeof TOKEN_SCOPES)[number][], expiresAt: p.expires_at ?? null, impersonation },
    eventMetadata(c, auth),
  );
  const row = await db.selectFrom('personal_access_tokens').selectAll().where('id', '=', tokenId).executeTakeFirstOrThrow();
  return c.json(toAccessToken(row, today(c), token), 201);
}

async function impersonationToken(c: Context) {
  const userId = userIdParam(c, 'user_id');
  const tokenId = userIdParam(c, 'impersonation_token_id');
  const user = await existingUser(c, userId);
  const token = await appContext(c)
    .db.selectFrom('personal_access_tokens')
    .selectAll()
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('impersonation', '=', true)
    .executeTakeFirst();
  if (!token) throw notFound('Impersonation Token');
  return { user, token };
}

/** GitLab's destroy_conditionally!: If-Unmodified-Since older than the resource → 412. */
function checkUnmodifiedSince(c: Context, updatedAt: Date) {
  const header = c.req.header('if-unmodified-since');
  if (!header) return;
  const since = new Date(header);
  if (!Number.isNaN(since.getTime()) && Math.floor(updatedAt.getTime() / 1000) > Math.floor(since.getTime() / 1000)) {
    throw new ApiError(412, { message: '412 Precondition Failed' });
  }
}

/** Groups where the user is the only owner (a soft delete must not orphan them). */
async function soleOwnedGroupCount(_c: Context, _userId: number): Promise<number> {
  return 0;
}
