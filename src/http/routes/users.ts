import { Hono, type Context } from 'hono';
import { sql, type SelectQueryBuilder } from 'kysely';
import {
  blockUser,
  createPersonalAccessToken,
  createUser,
  deleteUser,
  deleteUserCustomAttribute,
  revokePersonalAccessToken,
  setUserCustomAttribute,
  setUserStatus,
  unblockUser,
  updateUser,
} from '../../commands/users.js';
import type { Database } from '../../database.js';
import { TOKEN_SCOPES, isBlank, type ProfileChanges, type UserProfile } from '../../domain/users.js';
import { soleOwnedGroupCount as soleOwnedGroups } from '../../projections/members.js';
import {
  customAttributesByUser,
  findCustomAttribute,
  findUserById,
  findUserByIdOrUsername,
  listCustomAttributes,
  type UserRow,
} from '../../projections/users.js';
import {
  toCustomAttribute,
  toImpersonationToken,
  toPersonalAccessToken,
  toUser,
  toUserBasic,
  toUserPublic,
  toUserStatus,
  toUserWithAdmin,
} from '../entities/users.js';
import { USER_SCOPES, authenticate, eventMetadata, requireUser, type Auth } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { ApiError, forbidden, notFound, paramErrors, unauthorized } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { optional, parseParams, rawParams, required, t, withDefault, type ParamDef, type Parsed, type RawParams } from '../kernel/params.js';

// ───────────────────────────── Parameters ─────────────────────────────

// GitLab 12 (lib/api/users.rb): params :optional_attributes, shared by create and update.
const optionalAttributes = {
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
  private_profile: optional(t.boolean()),
};

// EE's optional_params_ee (applied on paid tiers only).
const eeAttributes = {
  shared_runners_minutes_limit: optional(t.integer()),
  extra_shared_runners_minutes_limit: optional(t.integer()),
  group_id_for_saml: optional(t.integer()),
  note: optional(t.string()),
};

const listParams = {
  username: optional(t.string()),
  extern_uid: optional(t.string()),
  provider: optional(t.string()),
  search: optional(t.string()),
  active: withDefault(t.boolean(), false),
  external: withDefault(t.boolean(), false),
  blocked: withDefault(t.boolean(), false),
  created_after: optional(t.datetime()),
  created_before: optional(t.datetime()),
  order_by: withDefault(t.values(['id', 'name', 'username', 'created_at', 'updated_at']), 'id'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
  with_custom_attributes: withDefault(t.boolean(), false),
};

type Shape = Record<string, ParamDef<any, boolean>>;

/**
 * Grape validates declarations in the order they are written, rules (at_least_one_of,
 * all_or_none_of) included, and reports every failure joined with ", ". This collects the
 * parts of one declaration in that order.
 */
function declaration(raw: RawParams) {
  const errors: string[] = [];
  return {
    parse<S extends Shape>(shape: S): Parsed<S> {
      try {
        return parseParams(shape, raw);
      } catch (error) {
        if (error instanceof ApiError && typeof error.body.error === 'string') {
          errors.push(error.body.error);
          return {} as Parsed<S>;
        }
        throw error;
      }
    },
    check(message: string | undefined) {
      if (message) errors.push(message);
    },
    done() {
      if (errors.length > 0) throw paramErrors(errors);
    },
  };
}

const given = (raw: RawParams, name: string) => raw[name] !== undefined && raw[name] !== null;

const atLeastOneOf = (raw: RawParams, names: readonly string[]) =>
  names.some((name) => given(raw, name)) ? undefined : `${names.join(', ')} are missing, at least one parameter must be provided`;

function allOrNoneOf(raw: RawParams, names: readonly string[]) {
  const count = names.filter((name) => given(raw, name)).length;
  return count > 0 && count < names.length ? `${names.join(', ')} provide all or none of parameters` : undefined;
}

/** A path integer declared `requires :x, type: Integer` (not a route requirement): "x is invalid". */
function integerCheck(c: Context, name: string): string | undefined {
  return /^\s*-?\d+\s*$/.test(c.req.param(name) ?? '') ? undefined : `${name} is invalid`;
}

type ProfileInput = Record<string, unknown>;

/** Maps GitLab's request fields onto the profile (admin → is_admin, extern_uid+provider → identities). */
function profileChanges(input: ProfileInput, current: UserRow | undefined, paidTier: boolean): ProfileChanges {
  const changes: Record<string, unknown> = {};
  const fields: (keyof UserProfile)[] = [
    'name', 'username', 'email', 'skype', 'linkedin', 'twitter', 'website_url', 'organization', 'bio', 'location',
    'public_email', 'projects_limit', 'can_create_group', 'external', 'private_profile',
  ];
  for (const field of fields) if (input[field] !== undefined) changes[field] = input[field];
  if (input.admin !== undefined) changes.is_admin = input.admin;
  if (paidTier) {
    for (const field of ['note', 'shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit'] as const) {
      if (input[field] !== undefined) changes[field] = input[field];
    }
  }
  // GitLab: an identity of the same provider gets the new extern_uid, otherwise one is added.
  if (typeof input.extern_uid === 'string' && typeof input.provider === 'string') {
    const identities = (current?.identities ?? []).filter((identity) => identity.provider !== input.provider);
    changes.identities = [...identities, { provider: input.provider, extern_uid: input.extern_uid }];
  }
  return changes as ProfileChanges;
}

// ───────────────────────────── Helpers ─────────────────────────────

/**
 * `:id` of the users resource has GitLab's route requirement `[0-9]*`: anything else matches
 * no route at all (404 before authentication). Too large an id names no user.
 */
function userIdFromPath(c: Context, name = 'id'): number {
  const value = c.req.param(name) ?? '';
  if (!/^\d+$/.test(value)) throw new ApiError(404, { error: '404 Not Found' });
  return Number(value);
}

async function existingUser(c: Context, id: number): Promise<UserRow> {
  const user = await findUserById(appContext(c).db, id);
  if (!user) throw notFound('User');
  return user;
}

/** GitLab's authenticated_as_admin! after authentication: 403 for non-admins. */
function mustBeAdmin(auth: Auth): asserts auth is Auth & { user: UserRow } {
  if (!auth.user) throw unauthorized();
  if (!auth.user.is_admin) throw forbidden();
}

/** GitLab's `before { authenticated_as_admin! }`: runs before parameter validation. */
async function requireAdminFirst(c: Context) {
  const auth = await authenticate(c, USER_SCOPES(c));
  mustBeAdmin(auth);
  return auth;
}

const today = (c: Context) => appContext(c).commands.now().toISOString().slice(0, 10);
const paid = (c: Context) => appContext(c).config.plan !== 'free';

/** GitLab renders a status message with its emoji pipeline: escaped text (emoji codes stay as text here). */
const statusHtml = (message: string | null) =>
  (message ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

// Gitlab::SQL::Pattern: words of 3+ characters (or "quoted strings") match anywhere; a
// shorter query only matches the whole (lower-cased) value.
const QUOTED_WORD = /(?<=^| )"[^"]+"(?= |$)/g;
const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, '\\$&')}%`;

function fuzzyWords(query: string): string[] {
  const quoted = query.match(QUOTED_WORD) ?? [];
  let rest = query;
  for (const q of quoted) rest = rest.replace(q, '');
  return [...rest.split(/\s+/).filter(Boolean), ...quoted.map((q) => q.slice(1, -1))].filter((word) => word.length >= 3);
}

type UserQuery = SelectQueryBuilder<Database, 'users', UserRow>;

/** GitLab's User.search: name or username (fuzzy), or the exact email; '@' prefix ignored. */
function searchUsers(query: UserQuery, search: string): { query: UserQuery; term: string } | null {
  const term = search.replace(/^@/, '').toLowerCase().replace(/\s+/g, ' ').trim();
  if (term === '') return null;
  const words = fuzzyWords(term);
  const fuzzy = (column: 'name' | 'username') =>
    words.length > 0 ? sql<boolean>`(${sql.join(words.map((w) => sql`${sql.ref(column)} ilike ${likePattern(w)}`), sql` and `)})` : sql<boolean>`lower(${sql.ref(column)}) = ${term}`;
  return { query: query.where(sql<boolean>`(${fuzzy('name')} or ${fuzzy('username')} or lower(email) = ${term})`), term };
}

/** Groups where the user is the only owner: GitLab refuses a soft delete of such a user. */
function soleOwnedGroupCount(c: Context, userId: number): Promise<number> {
  return soleOwnedGroups(appContext(c).db, userId);
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

// ───────────────────────────── Users ─────────────────────────────

export const userRoutes = new Hono<AppEnv>()
  .get('/users', async (c) => {
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

  .get('/users/:id', async (c) => {
    const id = userIdFromPath(c);
    const auth = await authenticate(c, USER_SCOPES(c));
    const p = declaration(await rawParams(c));
    const { with_custom_attributes } = p.parse({ with_custom_attributes: withDefault(t.boolean(), false) });
    p.done();
    const user = await existingUser(c, id);
    const { config, db } = appContext(c);
    if (!auth.user?.is_admin) return c.json(toUser(user, config, { viewer: auth.user }));
    const customAttributes = with_custom_attributes ? await listCustomAttributes(db, user.id) : undefined;
    return c.json(toUserWithAdmin(user, config, { viewer: auth.user, customAttributes }));
  })

  .post('/users', async (c) => {
    const auth = await requireUser(c);
    const raw = await rawParams(c);
    const declared = declaration(raw);
    const head = declared.parse({
      email: required(t.string()),
      password: optional(t.string()),
      reset_password: optional(t.boolean()),
      skip_confirmation: optional(t.boolean()),
    });
    declared.check(atLeastOneOf(raw, ['password', 'reset_password', 'force_random_password']));
    const body = declared.parse({ name: required(t.string()), username: required(t.string()), force_random_password: optional(t.boolean()), ...optionalAttributes });
    declared.check(allOrNoneOf(raw, ['extern_uid', 'provider']));
    const ee = declared.parse(eeAttributes);
    declared.done();
    mustBeAdmin(auth);

    const { commands, config } = appContext(c);
    const profile = profileChanges({ ...head, ...body, ...ee }, undefined, paid(c)) as ProfileChanges & Pick<UserProfile, 'name' | 'username' | 'email'>;
    const result = await createUser(
      commands,
      {
        profile,
        password: head.password,
        randomPassword: Boolean(head.reset_password || body.force_random_password),
        skipConfirmation: head.skip_confirmation ?? false,
      },
      eventMetadata(c, auth),
    );
    return c.json(toUserWithAdmin(await existingUser(c, result.state.id!), config), 201);
  })

  .put('/users/:id', async (c) => {
    const id = userIdFromPath(c);
    const auth = await requireUser(c);
    const raw = await rawParams(c);
    const declared = declaration(raw);
    const head = declared.parse({
      email: optional(t.string()),
      password: optional(t.string()),
      skip_reconfirmation: optional(t.boolean()),
      name: optional(t.string()),
      username: optional(t.string()),
      ...optionalAttributes,
    });
    declared.check(allOrNoneOf(raw, ['extern_uid', 'provider']));
    const ee = declared.parse(eeAttributes);
    declared.done();
    mustBeAdmin(auth);

    const user = await existingUser(c, id);
    const { commands, config } = appContext(c);
    await updateUser(commands, id, profileChanges({ ...head, ...ee }, user, paid(c)), head.password, eventMetadata(c, auth), {
      skipReconfirmation: head.skip_reconfirmation ?? false,
    });
    return c.json(toUserWithAdmin(await existingUser(c, id), config));
  })

  .delete('/users/:id', async (c) => {
    const id = userIdFromPath(c);
    const auth = await requireUser(c);
    const declared = declaration(await rawParams(c));
    const p = declared.parse({ hard_delete: optional(t.boolean()) });
    declared.done();
    mustBeAdmin(auth);
    const user = await existingUser(c, id);
    const soleOwner = await soleOwnedGroupCount(c, id);
    if (soleOwner > 0 && !p.hard_delete) throw new ApiError(409, { message: 'User cannot be removed while is the sole-owner of a group' });
    checkUnmodifiedSince(c, user.updated_at);
    await deleteUser(appContext(c).commands, id, p.hard_delete ?? false, soleOwner, eventMetadata(c, auth));
    return c.body(null, 204);
  })

  // GitLab: `user.block` / `user.activate` — the answer is whether the state changed.
  .post('/users/:id/block', async (c) => {
    const id = userIdFromPath(c);
    const auth = await requireUser(c);
    mustBeAdmin(auth);
    await existingUser(c, id);
    const result = await blockUser(appContext(c).commands, id, eventMetadata(c, auth));
    return c.json(result.events.length > 0, 201);
  })

  .post('/users/:id/unblock', async (c) => {
    const id = userIdFromPath(c);
    const auth = await requireUser(c);
    mustBeAdmin(auth);
    await existingUser(c, id);
    const result = await unblockUser(appContext(c).commands, id, eventMetadata(c, auth));
    return c.json(result.events.length > 0, 201);
  })

  // ───────────────────────────── Current user and status ─────────────────────────────

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
    const declared = declaration(await rawParams(c));
    const p = declared.parse({ emoji: optional(t.string()), message: optional(t.string()) });
    declared.done();
    // GitLab: declared_params keeps an omitted field as nil, so it is stored as null.
    const emoji = p.emoji ?? null;
    const message = p.message ?? null;
    await setUserStatus(appContext(c).commands, auth.user.id, { emoji, message, messageHtml: statusHtml(message) }, eventMetadata(c, auth));
    // GitLab presents `current_user.status`, which is nil once cleared: the body is `null`.
    if (isBlank(emoji) && isBlank(message)) return c.json(null);
    return c.json(toUserStatus(await existingUser(c, auth.user.id)));
  })

  .get('/users/:id_or_username/status', async (c) => {
    await authenticate(c, USER_SCOPES(c));
    const user = await findUserByIdOrUsername(appContext(c).db, c.req.param('id_or_username'));
    if (!user) throw notFound('User');
    return c.json(toUserStatus(user));
  })

  // ───────────────────────────── Custom attributes (admin) ─────────────────────────────
  // GitLab: CustomAttributesEndpoints — find the user (404), then authorize (403); GET is
  // open to anonymous callers up to the authorization, so they get 403 rather than 401.

  .get('/users/:id/custom_attributes', async (c) => {
    const id = userIdFromPath(c);
    const auth = await authenticate(c, USER_SCOPES(c));
    const user = await customAttributeOwner(c, id, auth);
    return c.json((await listCustomAttributes(appContext(c).db, user.id)).map(toCustomAttribute));
  })

  .get('/users/:id/custom_attributes/:key', async (c) => {
    const id = userIdFromPath(c);
    const auth = await authenticate(c, USER_SCOPES(c));
    const user = await customAttributeOwner(c, id, auth);
    const attribute = await findCustomAttribute(appContext(c).db, user.id, c.req.param('key'));
    if (!attribute) throw new ApiError(404, { message: '404 Not found' });
    return c.json(toCustomAttribute(attribute));
  })

  .put('/users/:id/custom_attributes/:key', async (c) => {
    const id = userIdFromPath(c);
    const auth = await requireUser(c);
    const declared = declaration(await rawParams(c));
    const { value } = declared.parse({ value: required(t.string()) });
    declared.done();
    const user = await customAttributeOwner(c, id, auth);
    const key = c.req.param('key');
    const { db, commands } = appContext(c);
    await setUserCustomAttribute(commands, user.id, key, value, eventMetadata(c, auth));
    return c.json(toCustomAttribute((await findCustomAttribute(db, user.id, key)) ?? { key, value }));
  })

  .delete('/users/:id/custom_attributes/:key', async (c) => {
    const id = userIdFromPath(c);
    const auth = await requireUser(c);
    const user = await customAttributeOwner(c, id, auth);
    await deleteUserCustomAttribute(appContext(c).commands, user.id, c.req.param('key'), eventMetadata(c, auth));
    return c.body(null, 204);
  })

  // ───────────── Impersonation and personal access tokens (admin) ─────────────

  .get('/users/:user_id/impersonation_tokens', async (c) => {
    await requireAdminFirst(c);
    const declared = declaration(await rawParams(c));
    declared.check(integerCheck(c, 'user_id'));
    const p = declared.parse({ state: withDefault(t.values(['all', 'active', 'inactive']), 'all') });
    declared.done();
    const user = await existingUser(c, Number(c.req.param('user_id')));
    const now = today(c);
    let query = appContext(c).db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', user.id).where('impersonation', '=', true);
    if (p.state === 'active') query = query.where('revoked', '=', false).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    if (p.state === 'inactive') query = query.where((eb) => eb.or([eb('revoked', '=', true), eb('expires_at', '<=', now)]));
    const rows = await paginate(c, query, (q) => q.orderBy('id', 'asc'));
    return c.json(rows.map((row) => toImpersonationToken(row, now)));
  })

  .post('/users/:user_id/impersonation_tokens', async (c) => {
    const auth = await requireAdminFirst(c);
    const declared = declaration(await rawParams(c));
    declared.check(integerCheck(c, 'user_id'));
    // GitLab 12: scopes is an optional Array here; the token model validates it.
    const p = declared.parse({ name: required(t.string()), expires_at: optional(t.date()), scopes: optional(t.array(t.string())) });
    declared.done();
    const user = await existingUser(c, Number(c.req.param('user_id')));
    const { token, tokenId } = await createPersonalAccessToken(
      appContext(c).commands,
      user.id,
      { name: p.name, scopes: p.scopes ?? [], expiresAt: p.expires_at ?? null, impersonation: true },
      eventMetadata(c, auth),
    );
    return c.json(toImpersonationToken(await tokenRow(c, tokenId), today(c), token), 201);
  })

  .get('/users/:user_id/impersonation_tokens/:impersonation_token_id', async (c) => {
    await requireAdminFirst(c);
    const { token } = await impersonationToken(c);
    return c.json(toImpersonationToken(token, today(c)));
  })

  .delete('/users/:user_id/impersonation_tokens/:impersonation_token_id', async (c) => {
    const auth = await requireAdminFirst(c);
    const { user, token } = await impersonationToken(c);
    checkUnmodifiedSince(c, token.created_at);
    await revokePersonalAccessToken(appContext(c).commands, user.id, token.id, true, eventMetadata(c, auth));
    return c.body(null, 204);
  })

  // GitLab 13.6: an administrator creates a personal access token for a user.
  .post('/users/:user_id/personal_access_tokens', async (c) => {
    const auth = await requireUser(c);
    const declared = declaration(await rawParams(c));
    declared.check(integerCheck(c, 'user_id'));
    const p = declared.parse({
      name: required(t.string()),
      scopes: required(t.array(t.values(TOKEN_SCOPES as unknown as [string, ...string[]]))),
      expires_at: optional(t.date()),
    });
    declared.done();
    mustBeAdmin(auth);
    const user = await existingUser(c, Number(c.req.param('user_id')));
    const { token, tokenId } = await createPersonalAccessToken(
      appContext(c).commands,
      user.id,
      { name: p.name, scopes: p.scopes, expiresAt: p.expires_at ?? null, impersonation: false },
      eventMetadata(c, auth),
    );
    return c.json(toPersonalAccessToken(await tokenRow(c, tokenId), today(c), token), 201);
  });

async function customAttributeOwner(c: Context, id: number, auth: Auth): Promise<UserRow> {
  const user = await findUserById(appContext(c).db, id);
  if (!user) throw notFound();
  if (!auth.user?.is_admin) throw forbidden();
  return user;
}

function tokenRow(c: Context, tokenId: number) {
  return appContext(c).db.selectFrom('personal_access_tokens').selectAll().where('id', '=', tokenId).executeTakeFirstOrThrow();
}

async function impersonationToken(c: Context) {
  const declared = declaration({});
  declared.check(integerCheck(c, 'user_id'));
  declared.check(integerCheck(c, 'impersonation_token_id'));
  declared.done();
  const user = await existingUser(c, Number(c.req.param('user_id')));
  const tokenId = Number(c.req.param('impersonation_token_id'));
  const token = Number.isSafeInteger(tokenId) && Math.abs(tokenId) <= 2147483647
    ? await appContext(c)
        .db.selectFrom('personal_access_tokens')
        .selectAll()
        .where('id', '=', tokenId)
        .where('user_id', '=', user.id)
        .where('impersonation', '=', true)
        .executeTakeFirst()
    : undefined;
  if (!token) throw notFound('Impersonation Token');
  return { user, token };
}
