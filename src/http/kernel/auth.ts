import type { Context } from 'hono';
import { tokenDigest } from '../../security/secrets.js';
import type { EventMetadata } from '../../eventstore/types.js';
import { PreconditionFailed } from '../../commands/kernel/precondition.js';
import type { Writer } from '../../commands/kernel/context.js';
import type { AuthUser, TokenRow, UserRow } from '../../projections/users.js';
import { findUserByIdOrUsername } from '../../projections/users/queries.js';
import { findTokenWithUser } from '../../projections/users/tokens.js';
import { appContext, today, type AppContext, type Auth } from './context.js';
import { credentialsStillHold, sameCredentials, type Credentials } from './credentials.js';
import { forbidden, notFound, resourceLocked } from '../../domain/errors.js';
import { insufficientScope, unauthorized } from './errors.js';
import { rawParams } from './params.js';
import { header } from './request.js';


/** Scopes that grant an endpoint: every endpoint takes `api`; GETs also `read_api`. */
export type Scope = 'api' | 'read_api' | 'read_user' | 'sudo';
export const API_SCOPES = (c: Context): Scope[] => (c.req.method === 'GET' || c.req.method === 'HEAD' ? ['api', 'read_api'] : ['api']);
/** GitLab: the users endpoints also accept `read_user` on GET. */
export const USER_SCOPES = (c: Context): Scope[] => (c.req.method === 'GET' || c.req.method === 'HEAD' ? ['api', 'read_api', 'read_user'] : ['api']);

const AUTH_CACHE = 'authBase';

/** The token the request presents, however it is sent; not yet checked. */
export async function presentedToken(c: Context): Promise<string | undefined> {
  const privateToken = header(c, 'private-token');
  if (privateToken) return privateToken;
  const authorization = header(c, 'authorization');
  if (authorization && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, '').trim();
  const raw = await rawParams(c);
  for (const name of ['private_token', 'access_token']) {
    const value = raw[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

const isExpired = (token: TokenRow, today: string) => token.expires_at !== null && token.expires_at <= today;
const grants = (token: TokenRow, scopes: readonly Scope[]) => scopes.some((scope) => token.scopes.includes(scope));

interface TokenUser {
  readonly user: AuthUser | null;
  readonly token: TokenRow | null;
  /** The user is the whole users row. */
  readonly whole: boolean;
}

/** The token's user, before sudo; 401 for an unknown, revoked or expired token; 403 for a blocked user. */
async function tokenUser(c: Context, whole: boolean): Promise<TokenUser> {
  const cached = c.get(AUTH_CACHE as never) as TokenUser | undefined;
  if (cached && (cached.whole || !whole)) return cached;
  const app = appContext(c);
  const presented = await presentedToken(c);
  let result: TokenUser = { user: null, token: null, whole: true };
  if (presented !== undefined) {
    const digest = tokenDigest(presented);
    // Without the whole users row, the credentials as last read, while every change to them is heard.
    const known = whole ? undefined : app.credentials.getCurrent(digest);
    if (known && !isExpired(known.token, today(c))) {
      result = { user: known.user, token: known.token, whole: false };
      c.set(AUTH_CACHE as never, result as never);
      return result;
    }
    const since = app.credentials.epoch;
    const found = await findTokenWithUser(app.db, digest, whole);
    const refusal =
      !found || found.token.revoked || isExpired(found.token, today(c))
        ? unauthorized()
        : found.user.state === 'blocked'
          ? forbidden('Your account has been blocked.')
          : undefined;
    if (!found || refusal) {
      app.credentials.delete(digest);
      throw refusal;
    }
    app.credentials.set(digest, found, since);
    result = { user: found.user, token: found.token, whole };
  }
  c.set(AUTH_CACHE as never, result as never);
  return result;
}

/**
 * Authenticates the request for an endpoint granted by `scopes`, applying sudo.
 * Returns the anonymous Auth (user null) when no credentials were sent.
 */
export async function authenticate(c: Context, scopes: readonly Scope[] = API_SCOPES(c), options: { wholeUser?: boolean } = {}): Promise<Auth> {
  const { user, token } = await tokenUser(c, options.wholeUser ?? false);
  const sudo = header(c, 'sudo') ?? (await sudoParam(c));
  if (sudo !== undefined && sudo !== '') {
    if (!user || !token) throw unauthorized();
    if (!user.is_admin) throw forbidden('Must be admin to use sudo');
    if (!token.scopes.includes('sudo')) throw insufficientScope(['sudo']);
    const target = await findUserByIdOrUsername(appContext(c).db, sudo);
    if (!target) throw notFound(`User with ID or username '${sudo}'`);
    const auth = { user: target, token, sudoFrom: user };
    c.set('auth' as never, auth as never);
    return auth;
  }
  if (token && !grants(token, scopes)) throw insufficientScope(scopes);
  const auth = { user, token, sudoFrom: null };
  c.set('auth' as never, auth as never);
  return auth;
}

async function sudoParam(c: Context): Promise<string | undefined> {
  const value = (await rawParams(c)).sudo;
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/** Like `authenticate`, but anonymous callers get 401. */
export async function requireUser(c: Context, scopes?: readonly Scope[]): Promise<Auth & { user: AuthUser }> {
  const auth = await authenticate(c, scopes);
  if (!auth.user) throw unauthorized();
  return auth as Auth & { user: AuthUser };
}

/** What a request writes with (src/commands/kernel/context.ts), and the caller it authenticated. */
export interface RequestWriter<A extends Auth = Auth & { user: AuthUser }> extends Writer {
  readonly auth: A;
}

/**
 * The request's writer as `auth`: the command context, and the metadata every event of the
 * request carries. For a route whose scope helper authenticated the caller, and for those
 * that write as nobody (`NOBODY`: SCIM's bearer token, the registry's notification).
 */
export function writerFor<A extends Auth>(c: Context, auth: A): RequestWriter<A> {
  return { auth, ctx: appContext(c).commands, metadata: eventMetadata(c, auth) };
}

/**
 * A write endpoint's first call: authenticates like `requireUser` (`admin`: like
 * `requireAdmin`) and gives the request's writer.
 */
export async function requireWriter(c: Context, options: { scopes?: readonly Scope[]; admin?: boolean } = {}): Promise<RequestWriter> {
  const auth = options.admin ? await requireAdmin(c, options.scopes) : await requireUser(c, options.scopes);
  return writerFor(c, auth);
}

/**
 * `requireWriter` for a route whose effect is its commands, without the authentication query
 * when this process has read the token before (CredentialCache). The caller is then taken as
 * cached, and while `run` runs, the request's command context carries a precondition — in
 * the writer `run` gets and in any the route builds (`writerFor`) — so no command of the
 * route escapes it: each first checks in its own transaction that the token and its user are
 * still as cached — in the same round trip. When they are not, the request is authorized
 * again by a query (401 for a revoked or expired token, 403 for a blocked user) and `run`
 * goes again on the fresh row, unless one of its commands had already passed the check (it
 * committed: a conflict). A `run` that ends, by an answer or an error, without any check is
 * checked by a query too, and goes again if what it ran on has changed.
 */
export async function withWriter<T>(c: Context, run: (w: RequestWriter) => Promise<T>, scopes: readonly Scope[] = API_SCOPES(c)): Promise<T> {
  const cached = await cachedCredentials(c, scopes);
  if (!cached) return run(await requireWriter(c, { scopes }));
  const app = appContext(c);
  let held = false;
  const precondition = { statement: credentialsStillHold(app.db, cached, today(c)), held: () => void (held = true) };
  const auth = { user: cached.user, token: cached.token, sudoFrom: null };
  c.set('auth' as never, auth as never);
  let result: T;
  try {
    result = await withAppContext(c, { ...app, commands: { ...app.commands, precondition } }, () => run(writerFor(c, auth)));
  } catch (error) {
    const stale = error instanceof PreconditionFailed;
    if (held && !stale) throw error;
    if (stale) app.credentials.delete(cached.digest);
    const fresh = await requireWriter(c, { scopes });
    // An earlier command of this request committed on these credentials: a rerun would repeat it.
    if (held) throw resourceLocked();
    if (stale || !sameCredentials(cached, fresh.auth)) return run(fresh);
    throw error;
  }
  if (held) return result;
  const fresh = await requireWriter(c, { scopes });
  return sameCredentials(cached, fresh.auth) ? result : run(fresh);
}

/** `run` with the request's application context (and so its command context) replaced by `app`. */
async function withAppContext<T>(c: Context, app: AppContext, run: () => Promise<T>): Promise<T> {
  const before = appContext(c);
  c.set('app' as never, app as never);
  try {
    return await run();
  } finally {
    c.set('app' as never, before as never);
  }
}

/**
 * The request's credentials as this process last read them, when it presents a token
 * without sudo and they pass what a query would check of them now (expiry, scopes).
 */
async function cachedCredentials(c: Context, scopes: readonly Scope[]): Promise<(Credentials & { digest: string }) | undefined> {
  if (header(c, 'sudo') !== undefined || (await sudoParam(c)) !== undefined) return undefined;
  const presented = await presentedToken(c);
  if (presented === undefined) return undefined;
  const digest = tokenDigest(presented);
  const credentials = appContext(c).credentials.get(digest);
  if (!credentials || isExpired(credentials.token, today(c)) || !grants(credentials.token, scopes)) return undefined;
  return { ...credentials, digest };
}

/** Like `requireUser`, with the caller's whole users row (what GET /user shows), in the same query. */
export async function requireUserRow(c: Context, scopes?: readonly Scope[]): Promise<Auth & { user: UserRow }> {
  const auth = await authenticate(c, scopes, { wholeUser: true });
  if (!auth.user) throw unauthorized();
  return auth as Auth & { user: UserRow };
}

/** Administrators only: anonymous 401, others 403. */
export async function requireAdmin(c: Context, scopes?: readonly Scope[]): Promise<Auth & { user: AuthUser }> {
  const auth = await requireUser(c, scopes);
  if (!auth.user.is_admin) throw forbidden();
  return auth;
}

/** A user agent longer than this is kept cut (it is the client's text, and every event carries it). */
const USER_AGENT_LIMIT = 512;

/** The metadata every event of this request carries: actor, sudo origin, token, IP, user agent, request id. */
function eventMetadata(c: Context, auth: Auth): EventMetadata {
  // What @hono/node-server's getConnInfo reads, without the family and port it also looks up
  // (which cost more than the rest of the metadata). Requests not from a socket have no IP.
  const socket = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket;
  const ip = socket?.remoteAddress ?? null;
  return {
    actor_id: auth.user?.id ?? null,
    actor_username: auth.user?.username ?? null,
    sudo_from_id: auth.sudoFrom?.id ?? null,
    impersonation: auth.token?.impersonation ?? false,
    token_id: auth.token?.id ?? null,
    ip,
    user_agent: c.req.header('user-agent')?.slice(0, USER_AGENT_LIMIT) ?? null,
    request_id: c.get('requestId' as never) ?? null,
  };
}
