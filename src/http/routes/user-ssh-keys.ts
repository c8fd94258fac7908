import { Hono, type Context } from 'hono';
import { addUserSshKey } from '../../commands/user-ssh-keys.js';
import { run } from '../../commands/kernel/run.js';
import { notFound, recordNotFound, serviceError } from '../../domain/errors.js';
import { userSshKeys } from '../../domain/user-ssh-keys.js';
import { findKeys, userSshKeysQuery, type AnyKeyView, type KeyLookup } from '../../projections/user-ssh-keys/queries.js';
import type { AuthUser } from '../../projections/users.js';
import { findUserById, findUserByIdOrUsername } from '../../projections/users/queries.js';
import { toSshKey } from '../entities/deploy-keys.js';
import { toSshKeyWithUser } from '../entities/user-ssh-keys.js';
import { arrayOf, ref } from '../entities/schemas/dsl.js';
import { USER_SCOPES, authenticate, requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { declared, required, t, type Shape } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { pathRow } from '../kernel/scope.js';
import { existingUser, mustBeAdmin, userIdFromPath } from './users/lookup.js';

/**
 * GitLab 12.10's SSH keys of users: API::Users' `/user/keys` (the caller's own) and
 * `/users/:id/keys` (anyone lists a user's keys; administrators add and delete them), and
 * API::Keys (`/keys/:id`, `/keys?fingerprint=`: administrators, keys of both kinds with their
 * owner). Validation is the Key model's (src/domain/ssh-keys.ts), shared with deploy keys.
 */

/** `requires :key, type: String; requires :title, type: String` (12.10 has no `expires_at`). */
const createShape = { key: required(t.string()), title: required(t.string()) } satisfies Shape;
const fingerprintShape = { fingerprint: required(t.string()) } satisfies Shape;
const ON_KEY = { pathIds: ['key_id'] } as const;

/** `current_user.keys.find_by(id: params[:key_id])`, or "404 Key Not Found". */
const ownKey = (c: Context, userId: number) => pathRow(c, 'key_id', (db, keyId) => userSshKeysQuery(db, userId, keyId).executeTakeFirst(), () => notFound('Key'));

/** `user.keys.find_by(id:)`, checked against If-Unmodified-Since, then destroyed (destroy_conditionally!). */
async function removeKey(c: Context, w: Awaited<ReturnType<typeof requireWriter>>, userId: number) {
  const key = await ownKey(c, userId);
  checkUnmodifiedSince(c, key.updated_at);
  await run(w, userSshKeys, key.id, { type: 'RemoveUserSshKey', userId });
  return c.body(null, 204);
}

/** The key just added, as Entities::SSHKey (201). */
async function created(c: Context, userId: number, keyId: number) {
  return c.json(toSshKey(await userSshKeysQuery(appContext(c).db, userId, keyId).executeTakeFirstOrThrow()), 201);
}

/** Entities::SSHKeyWithUser of each key, its owner read now. */
async function withUsers(c: Context, keys: readonly AnyKeyView[], viewer: AuthUser) {
  const { db, config } = appContext(c);
  return Promise.all(keys.map(async (key) => toSshKeyWithUser(key, key.user_id === null ? undefined : await findUserById(db, key.user_id), config, viewer)));
}

/** ActiveRecord's cast of `Key.find(params[:id])`: the string's leading integer ("12abc" is 12), else no key. */
function keyIdOf(text: string): number | null {
  const match = /^\s*\+?(\d+)/.exec(text);
  return match ? Number(match[1]) : null;
}

/**
 * KeysFinder#by_fingerprint (12.10): `SHA256:`/`sha256:` then base64 of 32 bytes, or an MD5
 * fingerprint (`^(\h{2}:){15}\h{2}`, Ruby's `^` a line's start, nothing anchored at the end).
 * Null when invalid ("Failed to return the key").
 */
function fingerprintLookup(fingerprint: string): KeyLookup | null {
  if (/^(sha256|SHA256):/.test(fingerprint)) {
    const value = fingerprint.replace(/sha256:|SHA256:/g, '');
    return base64Length(value) === 32 ? { column: 'fingerprint_sha256', value } : null;
  }
  return /^([0-9a-fA-F]{2}:){15}[0-9a-fA-F]{2}/m.test(fingerprint) ? { column: 'fingerprint', value: fingerprint } : null;
}

/** The length of Ruby's lenient Base64.decode64: characters outside the alphabet skipped, up to the first `=`. */
function base64Length(text: string): number {
  const chars = (text.split('=')[0] ?? '').replace(/[^A-Za-z0-9+/]/g, '').length;
  return Math.floor(chars / 4) * 3 + [0, 0, 1, 2][chars % 4]!;
}

export const userSshKeyRoutes = new Hono<AppEnv>()
  // ───────────────────────────── The caller's keys ─────────────────────────────

  .get('/user/keys', documented({ summary: "List the current user's SSH keys", responses: { 200: 'SSHKey[]' } }), async (c) => {
    const auth = await requireUser(c, USER_SCOPES(c));
    const rows = await paginate(c, userSshKeysQuery(appContext(c).db, auth.user.id), (q) => q.orderBy('k.id'));
    return c.json(rows.map(toSshKey));
  })

  .get('/user/keys/:key_id', documented({ summary: 'Get an SSH key of the current user', ...ON_KEY, responses: { 200: 'SSHKey', 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c, USER_SCOPES(c));
    await declared(c, {}, ON_KEY);
    return c.json(toSshKey(await ownKey(c, auth.user.id)));
  })

  .post('/user/keys', documented({ summary: 'Add an SSH key to the current user', params: createShape, responses: { 201: 'SSHKey' } }), async (c) => {
    const w = await requireWriter(c, { scopes: USER_SCOPES(c) });
    const p = await declared(c, createShape);
    const id = await addUserSshKey(w, w.auth.user.id, p);
    return created(c, w.auth.user.id, id);
  })

  .delete('/user/keys/:key_id', documented({ summary: 'Delete an SSH key of the current user', ...ON_KEY, responses: { 204: null, 404: 'Error', 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c, { scopes: USER_SCOPES(c) });
    await declared(c, {}, ON_KEY);
    return removeKey(c, w, w.auth.user.id);
  })

  // ───────────────────────────── A user's keys ─────────────────────────────

  // GitLab: `:user_id` takes an id or a username (API::USER_REQUIREMENTS); anyone may list them.
  .get('/users/:user_id/keys', documented({ summary: "List a user's SSH keys", auth: 'optional', responses: { 200: 'SSHKey[]', 404: 'Error' } }), async (c) => {
    await authenticate(c, USER_SCOPES(c));
    const { db } = appContext(c);
    const user = await findUserByIdOrUsername(db, c.req.param('user_id'));
    if (!user) throw notFound('User');
    const rows = await paginate(c, userSshKeysQuery(db, user.id), (q) => q.orderBy('k.id'));
    return c.json(rows.map(toSshKey));
  })

  .post('/users/:id/keys', documented({ summary: 'Add an SSH key to a user', params: createShape, pathIds: ['id'], auth: 'admin', responses: { 201: 'SSHKey', ...REFUSED } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c, { scopes: USER_SCOPES(c) });
    const p = await declared(c, createShape);
    mustBeAdmin(w.auth);
    const user = await existingUser(c, id);
    return created(c, user.id, await addUserSshKey(w, user.id, p));
  })

  .delete('/users/:id/keys/:key_id', documented({ summary: "Delete a user's SSH key", pathIds: ['id', 'key_id'], auth: 'admin', responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c, { scopes: USER_SCOPES(c) });
    await declared(c, {}, ON_KEY);
    mustBeAdmin(w.auth);
    const user = await existingUser(c, id);
    return removeKey(c, w, user.id);
  })

  // ───────────────────────────── API::Keys (administrators) ─────────────────────────────

  .get('/keys/:id', documented({ summary: 'Get an SSH key (of a user or a deploy key) with its owner', auth: 'admin', responses: { 200: 'SSHKeyWithUser', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    mustBeAdmin(auth);
    const id = keyIdOf(c.req.param('id'));
    // GitLab: `Key.find` — ActiveRecord::RecordNotFound, "404 Not found".
    const [key] = id === null ? [] : await findKeys(appContext(c).db, { id });
    if (!key) throw recordNotFound('Key');
    const [answer] = await withUsers(c, [key], auth.user);
    return c.json(answer);
  })

  .get(
    '/keys',
    documented({
      summary: 'Find an SSH key (of a user or a deploy key) by its MD5 or SHA256 fingerprint',
      params: fingerprintShape,
      auth: 'admin',
      responses: { 200: { anyOf: [ref('SSHKeyWithUser'), arrayOf(ref('SSHKeyWithUser'))] }, ...REFUSED },
    }),
    async (c) => {
      const auth = await requireUser(c);
      const p = await declared(c, fingerprintShape);
      // authenticated_with_full_private_access!: administrators.
      mustBeAdmin(auth);
      const raw = c.req.query('key_type');
      const userKeysOnly = raw === 'ssh';
      const { db } = appContext(c);
      // GitLab 12.10: a blank fingerprint filters nothing, and the finder's relation — every key — is answered as a list.
      if (p.fingerprint.trim() === '') return c.json(await withUsers(c, await findKeys(db, null, userKeysOnly), auth.user));
      const lookup = fingerprintLookup(p.fingerprint);
      if (!lookup) throw serviceError('Failed to return the key');
      const [key] = await findKeys(db, lookup, userKeysOnly);
      if (!key) throw notFound('Key');
      const [answer] = await withUsers(c, [key], auth.user);
      return c.json(answer);
    },
  );
