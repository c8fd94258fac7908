import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { sql, type ColumnType } from 'kysely';
import type { Db } from '../../database/database.js';
import { inOneTransaction } from '../../database/savepoints.js';
import type { Timestamp } from '../../database/columns.js';
import { badRequest, DomainError, unprocessable } from '../../domain/errors.js';
import type { CommandContext } from '../../commands/kernel/context.js';
import { Notifier } from '../../eventstore/notifier.js';
import { instanceKey } from '../../security/instance-keys.js';
import { seal, unseal } from '../../security/sealing.js';
import { tokenDigest } from '../../security/secrets.js';
import { authenticate, presentedToken } from './auth.js';
import { appContext, type AppContext, type AppEnv } from './context.js';
import { ApiError, errorResponse } from './errors.js';
import { header } from './request.js';

/**
 * Idempotent writes, a forgelog extension (GitLab has none; docs/architecture.md, "Idempotent
 * writes"), after Stripe's API and draft-ietf-httpapi-idempotency-key-header. A POST, PUT,
 * PATCH or DELETE under /api/v4 sent with `Idempotency-Key` runs in one database transaction
 * (src/database/savepoints.ts: its commands' transactions become savepoints) that also stores
 * its answer — status, headers, body (sealed) — with a digest of the request. The answer and
 * the request's events commit together or not at all, so a retry after a crash between the
 * commit and the answer finds the answer, and no retry ever writes twice:
 *
 * - same caller, same key, same request, within the expiry → the stored answer, with
 *   `Idempotent-Replayed: true`, and nothing appended;
 * - same caller and key, another request → 422;
 * - concurrent requests with one key take turns (a lock on the key: in this process, then a
 *   transaction advisory lock across processes); the later ones answer the stored answer;
 * - an answer that is not the request's outcome — a 5xx, a 401, `409 Resource lock` — is not
 *   stored, and what the request wrote is rolled back with it: a retry runs again.
 *
 * The key belongs to the token that sent it (its digest, as the tokens table keeps it), and is
 * looked at only while that token authenticates: a request with no valid token ignores the
 * header, as Stripe has no anonymous request and the draft makes a key unique per client. Expired rows are deleted a batch at a time by the requests
 * that store an answer.
 */

/** The stored answers: operational state, not a projection (migrations/0058_idempotency_keys.ts). */
export interface IdempotencyKeysTable {
  /** The digest of the token that sent the key (tokenDigest). */
  scope: string;
  key: string;
  request_digest: string;
  status: number;
  headers: ColumnType<[string, string][], string, string>;
  /** The answer's body, sealed under the instance key `idempotency` (a new token's `token` is in one). */
  body: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

declare module '../../database/database.js' {
  interface Database {
    idempotency_keys: IdempotencyKeysTable;
  }
}

export interface IdempotencyOptions {
  /**
   * Test hook (FORGELOG_TEST_KILL_AFTER_COMMIT_KEY, test/operations/idempotency-crash.test.ts):
   * the process kills itself with SIGKILL right after committing a request with this key,
   * before answering it. Unset in production.
   */
  readonly killAfterCommitKey?: string | undefined;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The draft's key is a structured-field string: visible ASCII and spaces; Stripe allows 255 characters. */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const KEY_REUSED = 'Idempotency-Key was already used with a different request';
/** The advisory lock class of the keys ('idmp'). */
const KEY_LOCK = 0x69646d70;
const SEAL_KEY = 'idempotency';
const PRUNE_BATCH = 100;
/** Headers of one exchange, not of the answer (CORS's follow the request's Origin): never stored, never replayed. */
const EXCHANGE_HEADERS = new Set(['x-request-id', 'date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'set-cookie', 'vary']);
const ofTheAnswer = (name: string) => !EXCHANGE_HEADERS.has(name) && !name.startsWith('access-control-');

export function idempotency(options: IdempotencyOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = header(c, 'idempotency-key');
    if (key === undefined || !WRITES.has(c.req.method)) return next();
    if (!VALID_KEY.test(key)) return errorResponse(c, badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters'));
    const presented = await presentedToken(c);
    if (presented === undefined || !(await authenticates(c))) return next();
    const app = appContext(c);
    // Read before the transaction: inside it, the embedded database serves its connection only.
    const secret = Buffer.from(await instanceKey(app.db, SEAL_KEY), 'hex');
    const request: KeyedRequest = { scope: tokenDigest(presented), key, digest: await keyedDigest(c, secret) };
    const response = await inTurn(`${request.scope}/${key}`, () => once(c, next, app, request));
    if (response.committed && key === options.killAfterCommitKey) process.kill(process.pid, 'SIGKILL');
    return response.response;
  };
}

/**
 * Whether the request's token authenticates now (unrevoked, unexpired, its user not blocked,
 * its sudo allowed): only then is its key looked at, so a stored answer is never given to a
 * token that could no longer make the request. Otherwise the route answers as it would.
 */
async function authenticates(c: Context): Promise<boolean> {
  try {
    return (await authenticate(c)).user !== null;
  } catch (error) {
    if (error instanceof ApiError || error instanceof DomainError) return false;
    throw error;
  }
}

interface KeyedRequest {
  readonly scope: string;
  readonly key: string;
  readonly digest: string;
}

/** The request's answer, and whether a transaction that stored it committed. */
interface Answered {
  readonly response: Response;
  readonly committed: boolean;
}

/** An answer that is not stored: thrown to roll the request's writes back with it. */
class NotStored extends Error {
  constructor(readonly response: Response) {
    super('the answer is not stored');
  }
}

async function once(c: Context, next: Next, app: AppContext, request: KeyedRequest): Promise<Answered> {
  const notifier = new DeferredNotifier(app.commands.notifier);
  let answered: Answered;
  try {
    answered = await inOneTransaction(app.db, async (trx) => {
      await sql`select pg_advisory_xact_lock(${KEY_LOCK}, hashtext(${`${request.scope}/${request.key}`}))`.execute(trx);
      const now = app.commands.now();
      const stored = await trx
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('scope', '=', request.scope)
        .where('key', '=', request.key)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (stored) {
        if (!(await sameRequest(c, stored.request_digest, request))) return { response: errorResponse(c, unprocessable(KEY_REUSED)), committed: false };
        const body = await unseal(app.db, SEAL_KEY, sealContext(request), stored.body);
        return { response: replay(c, stored.status, stored.headers, body), committed: false };
      }
      await runInTransaction(c, next, app, trx, notifier);
      const response = c.res;
      if (!storable(c, response)) throw new NotStored(response);
      const body = await response.clone().text();
      await prune(trx, now);
      const row = {
        scope: request.scope,
        key: request.key,
        request_digest: request.digest,
        status: response.status,
        headers: JSON.stringify([...response.headers].filter(([name]) => ofTheAnswer(name))),
        body: await seal(app.db, SEAL_KEY, sealContext(request), body),
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + app.config.idempotencyTtlHours * 3_600_000).toISOString(),
      };
      // An expired row of the key not yet pruned is replaced.
      await trx
        .insertInto('idempotency_keys')
        .values(row)
        .onConflict((oc) => oc.columns(['scope', 'key']).doUpdateSet(row))
        .execute();
      return { response, committed: true };
    });
  } catch (error) {
    if (error instanceof NotStored) return { response: error.response, committed: false };
    throw error;
  }
  notifier.flush();
  return answered;
}

/**
 * The route, with the request's application context on the transaction: every read and
 * command of the request goes through `trx`. Commands neither decide on the process's cached
 * folds nor feed them (a fold of a transaction that may still roll back), go through the
 * ordinary path (the one-round-trip batch is a transaction of its own), and take new ids one
 * `nextval` at a time: waiting on a block another request is taking through the handle would
 * wait, on the embedded database, for this very transaction to end.
 */
async function runInTransaction(c: Context, next: Next, app: AppContext, trx: Db, notifier: DeferredNotifier): Promise<void> {
  const { oneRoundTrip: _batch, streamCache: _cache, ids: _blocks, ...rest } = app.commands;
  const commands: CommandContext = { ...rest, db: trx, notifier };
  c.set('app' as never, { ...app, db: trx, commands } as never);
  try {
    await next();
  } finally {
    c.set('app' as never, app as never);
  }
}

/** A 5xx, a 401 (no caller) and `409 Resource lock` (lost to concurrent writers) are not the request's outcome. */
function storable(c: Context, response: Response): boolean {
  if (response.status >= 500 || response.status === 401) return false;
  const error = c.error;
  return !(error instanceof DomainError && error.code === 'conflict' && error.subject === 'Resource lock');
}

function replay(c: Context, status: number, headers: readonly [string, string][], body: string): Response {
  const replayed: Record<string, string> = Object.fromEntries(headers);
  replayed[REPLAYED_HEADER] = 'true';
  if (status === 204 || status === 304) return c.body(null, status, replayed);
  return c.body(body, status as ContentfulStatusCode, replayed);
}

/** The sealed body belongs to its caller and key: it cannot be opened as another's. */
const sealContext = (request: KeyedRequest) => `idempotency/${request.scope}/${request.key}`;

/** Deletes a batch of expired answers (those another request is deleting are skipped). */
async function prune(trx: Db, now: Date): Promise<void> {
  await sql`delete from idempotency_keys where (scope, key) in (
              select scope, key from idempotency_keys where expires_at <= ${now.toISOString()}
               order by expires_at limit ${PRUNE_BATCH} for update skip locked)`.execute(trx);
}

/**
 * The request's digest is keyed (HMAC-SHA256 under the instance key `idempotency`): a body may
 * hold a password or a variable's value, and a plain SHA-256 of it would let whoever reads the
 * table test guesses at SHA-256's speed.
 */
const KEYED_DIGEST = 'hmac-sha256:';
const DIGEST_CONTEXT = 'forgelog idempotency request\0';
const keyedDigest = async (c: Context, secret: Buffer) => KEYED_DIGEST + (await requestDigest(c, createHmac('sha256', secret).update(DIGEST_CONTEXT)));

/**
 * Whether a stored digest is the request's. A row stored before digests were keyed holds the
 * plain SHA-256 (no prefix); such rows are gone FORGELOG_IDEMPOTENCY_TTL_HOURS after the upgrade.
 */
async function sameRequest(c: Context, stored: string, request: KeyedRequest): Promise<boolean> {
  if (stored.startsWith(KEYED_DIGEST)) return stored === request.digest;
  return stored === (await requestDigest(c, createHash('sha256')));
}

/**
 * Feeds what makes two requests the same one to `hash`: method, path, query, the `Sudo`
 * header, and the body (its bytes; a multipart body's fields and files, whose boundary differs
 * at every send). The body is read once and kept by the request, so a second digest reads it again.
 */
async function requestDigest(c: Context, hash: Hash | Hmac): Promise<string> {
  const url = new URL(c.req.url);
  const path = url.pathname.replace(/\.json$/, '');
  const query = [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const type = header(c, 'content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  hash.update(JSON.stringify([c.req.method, path, query, header(c, 'sudo') ?? null, type]));
  if (type === 'multipart/form-data') {
    for (const [name, value] of await c.req.formData()) {
      if (typeof value === 'string') hash.update(JSON.stringify(['field', name, value]));
      else hash.update(JSON.stringify(['file', name, value.name, value.type, value.size])).update(new Uint8Array(await value.arrayBuffer()));
    }
  } else {
    hash.update(new Uint8Array(await c.req.arrayBuffer()));
  }
  return hash.digest('hex');
}

/** Runs `fn` after every earlier call with the same name in this process has finished. */
const turns = new Map<string, Promise<unknown>>();
async function inTurn<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const previous = turns.get(name) ?? Promise.resolve();
  const mine = previous.then(fn, fn);
  const settled = mine.then(
    () => {},
    () => {},
  );
  turns.set(name, settled);
  try {
    return await mine;
  } finally {
    if (turns.get(name) === settled) turns.delete(name);
  }
}

/**
 * The commit's wake-ups, told once the request's transaction has committed (never if it rolls
 * back): a follower woken earlier would find nothing below the horizon, and the credential
 * cache would forget a token before the change to it is visible.
 */
class DeferredNotifier extends Notifier {
  private readonly calls: (() => void)[] = [];
  constructor(private readonly target: Notifier) {
    super();
  }
  override appended(types?: Iterable<string>): void {
    const given = types === undefined ? undefined : [...types];
    this.calls.push(() => this.target.appended(given));
  }
  override signal(topic: string): void {
    this.calls.push(() => this.target.signal(topic));
  }
  flush(): void {
    for (const call of this.calls.splice(0)) call();
  }
}
