import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { kindOf } from '../domain/integrations/catalogue.js';
import { chatRequest, type Payload } from '../domain/integrations/chat-payloads.js';
import { heardAllAlong, sleep } from '../eventstore/waits.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import type { IntegrationDeliveryRow } from '../projections/integrations/tables.js';
import { integrationSecrets } from './integrations.js';
import { hookTarget } from './hook-deliveries.js';
import { addressesBlockedReason, blockedReason, unmapped, type Resolver } from '../security/url-blocker.js';

/**
 * Integrations' and webhooks' outbound delivery, second half: POSTs the `pending` rows the
 * `integration-deliveries` and `hook-deliveries` reactors recorded, in the background of
 * `serve` and `worker`.
 *
 * - Taking: a short transaction claims due rows (`for update skip locked`, so senders of
 *   several processes take different ones; PGlite has one session and one sender), counts the
 *   attempt and leases the row until the request has surely ended — the request itself runs
 *   outside any transaction. A sender that dies mid-request leaves the row to be taken again
 *   when the lease ends (at least once). The outcome is written only if the row is still at the
 *   attempt this sender took.
 * - Sending: the webhook URL is read from integration_secrets now (never stored with the
 *   delivery), then the SSRF guard runs again with the current
 *   `allow_local_requests_from_web_hooks_and_services` — on the URL, and on the addresses the
 *   connection actually resolves to (DNS rebinding) — and a refusal fails the delivery at once.
 *   Redirects are not followed (a redirect would lead past the guard).
 * - Outcome: 2xx delivered; 429, 5xx, a network error or the timeout retried after
 *   backoff × 2^(attempts − 1) until maxAttempts, then failed; any other status failed at once.
 */

export interface SenderOptions {
  /** First retry delay (FORGELOG_DELIVERY_BACKOFF_MS); doubles with each attempt. */
  readonly backoffMs: number;
  /** Attempts before a delivery is given up as failed (FORGELOG_DELIVERY_MAX_ATTEMPTS). */
  readonly maxAttempts: number;
  /** Per request (FORGELOG_DELIVERY_TIMEOUT_MS). */
  readonly timeoutMs: number;
  readonly now?: () => Date;
  readonly resolve?: Resolver;
  /** Rows taken per transaction (default 10), sent concurrently. */
  readonly batchSize?: number;
  /** Called after each attempt (for logs): never given the webhook URL. */
  readonly onAttempt?: (outcome: AttemptLog) => void;
}

export interface AttemptLog {
  readonly id: string;
  readonly kind: string;
  readonly projectId: number | null;
  readonly attempt: number;
  readonly status: 'delivered' | 'pending' | 'failed';
  readonly responseStatus: number | null;
  readonly error: string | null;
}

/** Sends what is due now, batch after batch; returns the number of attempts made. */
export async function sendDueDeliveries(db: Db, options: SenderOptions): Promise<number> {
  let attempts = 0;
  for (;;) {
    const taken = await takeDue(db, options);
    if (taken.length === 0) return attempts;
    await Promise.all(taken.map((row) => attempt(db, row, options)));
    attempts += taken.length;
  }
}

export interface SenderLoopOptions extends SenderOptions {
  readonly signal: AbortSignal;
  /** Wake-up (Notifier.onSignal of the reactor's topic); the loop polls anyway. */
  readonly onRecorded?: (wake: () => void) => () => void;
  /** The longest wait when nothing is due and nothing woke the loop (default 1 s; serve: FORGELOG_POLL_INTERVAL_MS). */
  readonly pollMs?: number;
  /** The longest wait as asked each round, when given (serve: runtime.ts, idleWait); else pollMs. */
  readonly idleMs?: () => number;
  readonly onError?: (error: unknown) => void;
}

/** The shortest wait for a retry that is due but held by another sender (skip locked). */
const HELD_RETRY_MS = 50;

/**
 * The background loop: sends what is due, then waits for a wake-up, the next retry's time or
 * the poll interval, whichever comes first — so an idle instance queries nothing between polls.
 */
export async function runDeliverySender(db: Db, options: SenderLoopOptions): Promise<void> {
  const pollMs = options.pollMs ?? 1_000;
  const wakeups = heardAllAlong(options.onRecorded);
  try {
    while (!options.signal.aborted) {
      let waitMs = options.idleMs?.() ?? pollMs;
      try {
        await sendDueDeliveries(db, options);
        const next = await nextAttemptAt(db);
        if (next) {
          const now = (options.now ?? (() => new Date()))();
          waitMs = Math.min(waitMs, Math.max(HELD_RETRY_MS, next.getTime() - now.getTime()));
        }
      } catch (error) {
        options.onError?.(error);
      }
      await sleep(waitMs, options.signal, wakeups.subscribe);
    }
  } finally {
    wakeups.close();
  }
}

/** When the earliest pending delivery falls due (a taken one: when its lease ends). */
async function nextAttemptAt(db: Db): Promise<Date | undefined> {
  const row = await db
    .selectFrom('integration_deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row?.next ? new Date(row.next as unknown as string) : undefined;
}

// ───────────────────────────── Taking ─────────────────────────────

async function takeDue(db: Db, options: SenderOptions): Promise<IntegrationDeliveryRow[]> {
  const now = (options.now ?? (() => new Date()))();
  // Longer than any request lasts: the row is taken again only if this sender is gone.
  const leaseUntil = new Date(now.getTime() + options.timeoutMs + 60_000).toISOString();
  return db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom('integration_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now.toISOString() as unknown as Date)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(options.batchSize ?? 10)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return [];
    return trx
      .updateTable('integration_deliveries')
      .set({ attempts: sql`attempts + 1`, last_attempt_at: now.toISOString(), next_attempt_at: leaseUntil })
      .where(
        'id',
        'in',
        due.map((d) => d.id),
      )
      .returningAll()
      .execute();
  });
}

// ───────────────────────────── One attempt ─────────────────────────────

type Result = { readonly status: 'delivered' | 'failed' | 'retry'; readonly responseStatus: number | null; readonly error: string | null };

async function attempt(db: Db, row: IntegrationDeliveryRow, options: SenderOptions): Promise<void> {
  const result = await send(db, row, options).catch((error: unknown): Result => ({ status: 'retry', responseStatus: null, error: describe(error) }));
  const now = (options.now ?? (() => new Date()))();
  const giveUp = result.status === 'retry' && row.attempts >= options.maxAttempts;
  const status = result.status === 'retry' ? (giveUp ? 'failed' : 'pending') : result.status;
  const next = status === 'pending' ? new Date(now.getTime() + options.backoffMs * 2 ** (row.attempts - 1)).toISOString() : null;
  await db
    .updateTable('integration_deliveries')
    .set({ status, next_attempt_at: next, response_status: result.responseStatus, last_error: result.error })
    .where('id', '=', row.id)
    .where('attempts', '=', row.attempts)
    .execute();
  options.onAttempt?.({ id: row.id, kind: row.kind, projectId: row.project_id, attempt: row.attempts, status, responseStatus: result.responseStatus, error: result.error });
}

const failed = (error: string, responseStatus: number | null = null): Result => ({ status: 'failed', responseStatus, error });

/**
 * Where a delivery is posted and what with: an integration's webhook (the URL is its secret),
 * or a webhook's URL with GitLab's headers (src/commands/hook-deliveries.ts); or why it is not.
 */
export type DeliveryTarget =
  | {
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: string;
      readonly allowLocal: boolean;
      /** WebHook#enable_ssl_verification (integrations always verify). */
      readonly verifyTls: boolean;
    }
  | { readonly refused: string };

async function integrationTarget(db: Db, row: IntegrationDeliveryRow): Promise<DeliveryTarget> {
  const kind = kindOf(row.kind);
  if (!kind?.chat) return { refused: 'the integration kind sends nothing' };
  const integration = await db.selectFrom('integrations').select(['id', 'active']).where('id', '=', row.integration_id).executeTakeFirst();
  if (!integration?.active || row.project_id === null) return { refused: 'the integration is no longer active' };
  const webhook = (await integrationSecrets(db, row.project_id, row.kind)).webhook;
  if (!webhook) return { refused: 'the webhook is not set' };
  const allowLocal = (await currentSettings(db)).allow_local_requests_from_web_hooks_and_services === true;
  const request = chatRequest(kind.chat, row.payload as Payload);
  return { url: webhook, headers: { 'Content-Type': request.contentType }, body: request.body, allowLocal, verifyTls: true };
}

async function send(db: Db, row: IntegrationDeliveryRow, options: SenderOptions): Promise<Result> {
  const target = row.hook_id !== null ? await hookTarget(db, row) : await integrationTarget(db, row);
  if ('refused' in target) return failed(target.refused);
  const { url: webhook, allowLocal } = target;
  const refused = await blockedReason(webhook, { allowLocal, ...(options.resolve ? { resolve: options.resolve } : {}) });
  if (refused) return failed(`is blocked: ${refused}`);
  let responseStatus: number;
  try {
    responseStatus = await post(webhook, target, options.timeoutMs, allowLocal ? undefined : guardedLookup(options.resolve));
  } catch (error) {
    if (error instanceof Blocked) return failed(`is blocked: ${error.message}`);
    return { status: 'retry', responseStatus: null, error: describe(error, webhook) };
  }
  if (responseStatus >= 200 && responseStatus < 300) return { status: 'delivered', responseStatus, error: null };
  const error = `the webhook answered ${responseStatus}`;
  if (responseStatus === 429 || responseStatus >= 500) return { status: 'retry', responseStatus, error };
  return failed(error, responseStatus);
}

// ───────────────────────────── HTTP ─────────────────────────────

class Blocked extends Error {}

type Lookup = NonNullable<http.RequestOptions['lookup']>;

/**
 * The connection's own name resolution, checked by the SSRF guard: the address connected to
 * is one the guard saw (a host that answers a public address to the first lookup and a
 * private one to the next gets no request).
 */
function guardedLookup(resolve?: Resolver): Lookup {
  return ((hostname: string, lookupOptions: { all?: boolean }, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    const found: Promise<LookupAddress[]> = resolve
      ? resolve(hostname).then((list) => list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))
      : new Promise((ok, ko) => systemLookup(hostname, { all: true, verbatim: true }, (error, list) => (error ? ko(error) : ok(list))));
    found.then(
      (list) => {
        const reason = addressesBlockedReason(list.map((a) => unmapped(a.address)));
        if (reason) return callback(new Blocked(reason), '', 0);
        if (list.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        if (lookupOptions.all) return callback(null, list);
        callback(null, list[0]!.address, list[0]!.family);
      },
      (error: Error) => callback(error, '', 0),
    );
  }) as Lookup;
}

/** One POST; resolves with the response status (the body is read and dropped). */
function post(url: string, request: { headers: Readonly<Record<string, string>>; body: string; verifyTls: boolean }, timeoutMs: number, lookup: Lookup | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    const req = transport.request(
      target,
      {
        method: 'POST',
        headers: { ...request.headers, 'Content-Length': Buffer.byteLength(request.body), 'User-Agent': 'GitLab/12.10.0' },
        ...(lookup ? { lookup } : {}),
        ...(request.verifyTls ? {} : { rejectUnauthorized: false }),
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(request.body);
  });
}

/** An error in words, without the webhook URL (its path is the credential). */
function describe(error: unknown, webhook?: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  let message = error instanceof Error ? error.message : String(error);
  if (webhook) message = message.split(webhook).join('<webhook>');
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
