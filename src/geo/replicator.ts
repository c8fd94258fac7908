import { sql } from 'kysely';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { GeoConfig } from '../config.js';
import type { Db } from '../database/database.js';
import type { ExportedEvent } from '../eventstore/export.js';
import { GENESIS_HASH, eventHash } from '../eventstore/hash.js';
import type { Notifier } from '../eventstore/notifier.js';
import { sleep } from '../eventstore/waits.js';
import { toLoggedEvent } from '../eventstore/store.js';
import type { Projector } from '../projections/projector.js';
import { findGeoNodeByName, replicationCursor } from '../projections/geo-nodes/queries.js';
import { measureSecondary } from '../projections/geo-nodes/status.js';
import { REVISION, VERSION } from '../version.js';
import { geoAuthorization } from './keys.js';

/**
 * A Geo secondary's follower (docs/geo.md): reads the primary's log after its cursor over
 * GET /api/v4/geo/replication/events, checks each event against its stream's hash chain, and
 * appends it to its own log as it is — same position, event id, stream version and hash, so
 * `forgelog events verify` passes here too — running the inline projections in the same
 * transaction as the cursor's move (the async worker follows the local log as usual). One
 * transaction of the primary is applied in one transaction here, in the primary's gap-free
 * order, so this log's gap-free order is the primary's.
 *
 * An event that cannot be applied stops replication there: it is recorded in
 * geo_event_failures (`GET /geo_nodes/current/failures`), retried on every poll, and its
 * record removed once it applies. A hash that does not verify is a verification failure
 * (and a checksum mismatch); anything else a sync failure.
 */

export const REPLICATION_PAGE = 500;

const exportedEvent = z.object({
  global_position: z.string().regex(/^\d+$/),
  transaction_id: z.string().regex(/^\d+$/),
  stream_id: z.string(),
  stream_version: z.int().min(1),
  event_id: z.string(),
  event_type: z.string(),
  schema_version: z.int().min(1),
  data: z.unknown(),
  metadata: z.record(z.string(), z.unknown()),
  actor_id: z.int().nullable(),
  project_id: z.int().nullable(),
  group_id: z.int().nullable(),
  target_type: z.string().nullable(),
  target_id: z.int().nullable(),
  occurred_at: z.iso.datetime(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});

/** What the primary answers (src/http/routes/geo-nodes.ts, the replication endpoint). */
const replicationPage = z.object({
  events: z.array(exportedEvent),
  last_event_id: z.string().nullable(),
  last_event_at: z.iso.datetime().nullable(),
});

export interface ReplicatorOptions {
  readonly db: Db;
  readonly geo: GeoConfig;
  readonly inlineProjectors: readonly Projector[];
  readonly notifier: Notifier;
  readonly logger: Logger;
  readonly now: () => Date;
}

class ApplyFailure extends Error {
  constructor(
    readonly event: ExportedEvent,
    readonly failureType: 'sync' | 'verification',
    readonly checksumMismatch: boolean,
    message: string,
  ) {
    super(message);
  }
}

export class GeoReplicator {
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  private lastStatusAt = 0;

  constructor(private readonly options: ReplicatorOptions) {}

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async loop(): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      let caughtUp = true;
      try {
        caughtUp = await this.replicateOnce();
      } catch (error) {
        await this.recordPollError(error);
      }
      if (Date.now() - this.lastStatusAt >= this.options.geo.statusIntervalMs || caughtUp) await this.postStatusQuietly();
      if (caughtUp) await sleep(this.options.geo.pollIntervalMs, signal);
    }
  }

  /** One page from the primary, applied. Answers whether this node has caught up (or stopped at a failure). */
  async replicateOnce(): Promise<boolean> {
    const { db } = this.options;
    const cursor = await replicationCursor(db);
    const after = cursor ? `${cursor.transaction_id}:${cursor.global_position}` : '0:0';
    const page = replicationPage.parse(await this.request('GET', `/geo/replication/events?after=${after}&limit=${REPLICATION_PAGE}`));
    await this.saveHead(page.last_event_id, page.last_event_at);
    for (const group of byTransaction(page.events as ExportedEvent[])) {
      try {
        await this.apply(group);
      } catch (error) {
        await this.recordFailure(error, group[0]!);
        return true;
      }
    }
    return page.events.length < REPLICATION_PAGE;
  }

  /** Measures this node and posts it to the primary (GitLab's Geo::NodeStatusPostService). */
  async postStatus(): Promise<boolean> {
    const { db, geo, now } = this.options;
    const node = await findGeoNodeByName(db, geo.nodeName);
    if (!node) return false;
    const figures = await measureSecondary(db, node, { now: now(), version: VERSION, revision: REVISION });
    await this.request('POST', '/geo/status', figures);
    this.lastStatusAt = Date.now();
    return true;
  }

  private async postStatusQuietly() {
    try {
      await this.postStatus();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'Geo: could not post this node’s status to the primary');
      this.lastStatusAt = Date.now();
    }
  }

  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const { geo } = this.options;
    const response = await fetch(`${geo.primaryUrl}/api/v4${path}`, {
      method,
      headers: {
        Authorization: geoAuthorization(geo.secret!, geo.nodeName),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.any([this.stopping.signal, AbortSignal.timeout(30_000)]),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`the primary answered ${method} ${path} with ${response.status}: ${text.slice(0, 200)}`);
    return text === '' ? null : JSON.parse(text);
  }

  private async apply(group: readonly ExportedEvent[]): Promise<void> {
    const { db, inlineProjectors, notifier } = this.options;
    await db.transaction().execute(async (trx) => {
      for (const event of group) {
        const head = await trx
          .selectFrom('events')
          .select(['stream_version', 'hash'])
          .where('stream_id', '=', event.stream_id)
          .orderBy('stream_version', 'desc')
          .limit(1)
          .executeTakeFirst();
        const version = head?.stream_version ?? 0;
        if (version !== event.stream_version - 1) {
          throw new ApplyFailure(event, 'sync', false, `stream ${event.stream_id} is at version ${version} here; the event is its version ${event.stream_version}`);
        }
        const occurredAt = new Date(event.occurred_at);
        const expected = eventHash(head?.hash ?? GENESIS_HASH, {
          streamId: event.stream_id,
          streamVersion: event.stream_version,
          eventId: event.event_id,
          type: event.event_type,
          schemaVersion: event.schema_version,
          data: event.data,
          metadata: event.metadata,
          occurredAt,
        });
        if (expected !== event.hash) throw new ApplyFailure(event, 'verification', true, 'the event does not match its hash');
        // The primary's position, kept: `overriding system value` past the identity column.
        await sql`
          insert into events (global_position, stream_id, stream_version, event_id, event_type, schema_version, data, metadata,
                              actor_id, project_id, group_id, target_type, target_id, occurred_at, hash)
          overriding system value
          values (${event.global_position}::bigint, ${event.stream_id}, ${event.stream_version}, ${event.event_id}::uuid, ${event.event_type},
                  ${event.schema_version}, ${JSON.stringify(event.data)}::jsonb, ${JSON.stringify(event.metadata)}::jsonb, ${event.actor_id},
                  ${event.project_id}, ${event.group_id}, ${event.target_type}, ${event.target_id}, ${event.occurred_at}::timestamptz, ${event.hash})`.execute(trx);
        const projected = toLoggedEvent({
          global_position: event.global_position,
          transaction_id: '0',
          stream_id: event.stream_id,
          stream_version: event.stream_version,
          event_id: event.event_id,
          event_type: event.event_type,
          schema_version: event.schema_version,
          data: event.data,
          occurred_at: occurredAt,
        });
        for (const projector of inlineProjectors) {
          if (projector.handles.includes(projected.type)) await projector.apply(projected, trx);
        }
      }
      const last = group.at(-1)!;
      await trx
        .updateTable('geo_replication_cursor')
        .set({ transaction_id: last.transaction_id, global_position: last.global_position, last_event_id: last.global_position, last_event_at: last.occurred_at })
        .where('id', '=', 1)
        .execute();
      await trx
        .deleteFrom('geo_event_failures')
        .where(
          'global_position',
          'in',
          group.map((e) => e.global_position),
        )
        .execute();
    });
    notifier.appended(group.map((e) => e.event_type));
  }

  /** What the primary says its head is; the cursor row is made on the first answer. */
  private async saveHead(id: string | null, at: string | null) {
    const polledAt = this.options.now().toISOString();
    await this.options.db
      .insertInto('geo_replication_cursor')
      .values({ id: 1, transaction_id: '0', global_position: '0', primary_last_event_id: id, primary_last_event_at: at, polled_at: polledAt, poll_error: null })
      .onConflict((oc) => oc.column('id').doUpdateSet({ primary_last_event_id: id, primary_last_event_at: at, polled_at: polledAt, poll_error: null }))
      .execute();
  }

  private async recordPollError(error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    this.options.logger.warn({ err: error }, 'Geo: could not read the primary’s log');
    try {
      await this.options.db
        .insertInto('geo_replication_cursor')
        .values({ id: 1, transaction_id: '0', global_position: '0', poll_error: message.slice(0, 1000) })
        .onConflict((oc) => oc.column('id').doUpdateSet({ poll_error: message.slice(0, 1000) }))
        .execute();
    } catch (failure) {
      this.options.logger.warn({ err: failure }, 'Geo: could not record the replication error');
    }
  }

  private async recordFailure(error: unknown, first: ExportedEvent) {
    const failure = error instanceof ApplyFailure ? error : undefined;
    const event = failure?.event ?? first;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 1000);
    const at = this.options.now().toISOString();
    this.options.logger.error({ err: error, position: event.global_position, stream_id: event.stream_id }, 'Geo: could not apply an event of the primary');
    await this.options.db
      .insertInto('geo_event_failures')
      .values({
        global_position: event.global_position,
        stream_id: event.stream_id,
        event_type: event.event_type,
        project_id: event.project_id,
        failure_type: failure?.failureType ?? 'sync',
        checksum_mismatch: failure?.checksumMismatch ?? false,
        event_hash: event.hash,
        message,
        retry_count: 1,
        first_failed_at: at,
        last_failed_at: at,
      })
      .onConflict((oc) =>
        oc.column('global_position').doUpdateSet({
          retry_count: sql`geo_event_failures.retry_count + 1`,
          message,
          failure_type: failure?.failureType ?? 'sync',
          checksum_mismatch: failure?.checksumMismatch ?? false,
          last_failed_at: at,
        }),
      )
      .execute();
  }
}

/** Consecutive events of one transaction of the primary. */
function byTransaction(events: readonly ExportedEvent[]): ExportedEvent[][] {
  const groups: ExportedEvent[][] = [];
  for (const event of events) {
    const last = groups.at(-1);
    if (last && last[0]!.transaction_id === event.transaction_id) last.push(event);
    else groups.push([event]);
  }
  return groups;
}
