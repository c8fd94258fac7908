import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { defineAggregate } from '../../src/domain/aggregate.js';
import type { DatabaseHandle, Db } from '../../src/database/database.js';
import type { Decider } from '../../src/domain/decider.js';
import type { EventOf } from '../../src/domain/events.js';
import { Notifier } from '../../src/eventstore/notifier.js';
import type { ProjectedEvent } from '../../src/eventstore/types.js';
import type { Projector } from '../../src/projections/projector.js';
import { run } from '../../src/commands/kernel/run.js';
import type { CommandContext } from '../../src/commands/kernel/context.js';

// ───────────────────────────── A tiny decider ─────────────────────────────

const countEvents = {
  Counted: z.object({ amount: z.number().int(), delayMs: z.number().int().optional() }),
  Ignored: z.object({}).strict(),
};
export type CountEvent = EventOf<typeof countEvents>;
export type CountCommand = { readonly type: 'Count'; readonly amount: number; readonly delayMs?: number } | { readonly type: 'Ignore' };

export const counterDecider: Decider<CountCommand, CountEvent, { total: number }, string> = {
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => (event.type === 'Counted' ? { total: state.total + event.data.amount } : state),
  decide: (command) =>
    command.type === 'Count'
      ? [{ type: 'Counted', data: { amount: command.amount, ...(command.delayMs ? { delayMs: command.delayMs } : {}) } }]
      : [{ type: 'Ignored', data: {} }],
};

export function commandContext(handle: DatabaseHandle, inlineProjectors: readonly Projector[] = []): CommandContext {
  return {
    db: handle.db,
    inlineProjectors,
    notifier: new Notifier(handle.pool),
    now: () => new Date(),
    ...(handle.oneRoundTrip ? { oneRoundTrip: handle.oneRoundTrip } : {}),
  };
}

/** A counter per stream: the key is the stream's id. */
export const counters = defineAggregate({ name: 'counters', streamId: (id: string) => id, events: countEvents, decider: counterDecider });

export const count = (ctx: CommandContext, streamId: string, amount: number, delayMs?: number) =>
  run({ ctx, metadata: { actor_id: 1 } }, counters, streamId, { type: 'Count', amount, delayMs });

export const ignore = (ctx: CommandContext, streamId: string) => run({ ctx, metadata: { actor_id: 1 } }, counters, streamId, { type: 'Ignore' });

// ───────────────────────────── Counter projector (idempotent) ─────────────────────────────

export async function createCounterTable(db: Db, table = 'test_counts') {
  await sql.raw(`create table ${table} (
    stream_id text primary key,
    events integer not null,
    total bigint not null,
    last_version integer not null check (last_version > 0)
  )`).execute(db);
  await sql.raw(`create index ${table}_total on ${table} (total desc)`).execute(db);
  await sql.raw(`create unique index ${table}_stream_lower on ${table} (lower(stream_id))`).execute(db);
}

/**
 * Per stream: how many `Counted` events, the sum of their amounts (times `factor`) and the
 * last version — an upsert guarded by the stream version, so a replayed event changes nothing.
 */
export function counterProjector(options: {
  name?: string;
  table?: string;
  version?: number;
  mode?: 'inline' | 'async';
  batch?: boolean;
  factor?: number;
} = {}): Projector {
  const table = options.table ?? 'test_counts';
  const factor = options.factor ?? 1;
  const amountOf = (e: ProjectedEvent) => (e.data as { amount: number }).amount * factor;
  const projector = handWritten({
    name: options.name ?? 'counts',
    version: options.version ?? 1,
    mode: options.mode ?? 'async',
    handles: ['Counted'],
    tables: [table],
    async apply(event, trx) {
      await sql`
        insert into ${sql.table(table)} (stream_id, events, total, last_version)
        values (${event.streamId}, 1, ${amountOf(event)}, ${event.streamVersion})
        on conflict (stream_id) do update
          set events = ${sql.table(table)}.events + 1,
              total = ${sql.table(table)}.total + excluded.total,
              last_version = excluded.last_version
        where ${sql.table(table)}.last_version < excluded.last_version`.execute(trx);
    },
  });
  if (options.batch === false) return projector;
  return {
    ...projector,
    // The same guard as `apply`, for a whole batch: per stream, only events past the stored version count.
    async applyBatch(events, trx) {
      const t = sql.table(table);
      await sql`
        with x (stream_id, v, amount) as (
          select * from unnest(${events.map((e) => e.streamId)}::text[], ${events.map((e) => e.streamVersion)}::int[], ${events.map(amountOf)}::bigint[])
        ),
        fresh as (
          select x.stream_id, count(*) as events, sum(x.amount) as total, max(x.v) as last_version
            from x left join ${t} cur on cur.stream_id = x.stream_id
           where x.v > coalesce(cur.last_version, 0)
           group by x.stream_id
        )
        insert into ${t} (stream_id, events, total, last_version)
        select stream_id, events, total, last_version from fresh
        on conflict (stream_id) do update
          set events = ${t}.events + excluded.events,
              total = ${t}.total + excluded.total,
              last_version = excluded.last_version
        where ${t}.last_version < excluded.last_version`.execute(trx);
    },
  };
}

// ───────────────────────────── Delivery log (deliberately not idempotent) ─────────────────────────────

/** Records every delivery, duplicates included: the test sees an event applied twice. */
export async function createDeliveryTable(db: Db, table = 'test_deliveries') {
  await sql.raw(`create table ${table} (seq bigserial primary key, event_id uuid not null, stream_id text not null, stream_version integer not null)`).execute(db);
}

export function deliveryProjector(options: { name?: string; table?: string; handles?: readonly string[] } = {}): Projector {
  const table = options.table ?? 'test_deliveries';
  return handWritten({
    name: options.name ?? 'deliveries',
    version: 1,
    mode: 'async',
    handles: options.handles ?? ['Counted', 'Ignored'],
    tables: [table],
    async apply(event, trx) {
      await sql`insert into ${sql.table(table)} (event_id, stream_id, stream_version) values (${event.eventId}, ${event.streamId}, ${event.streamVersion})`.execute(trx);
    },
  });
}

export async function deliveries(db: Db, table = 'test_deliveries') {
  const { rows } = await sql<{ seq: string; event_id: string; stream_id: string; stream_version: number }>`
    select seq, event_id, stream_id, stream_version from ${sql.table(table)} order by seq`.execute(db);
  return rows;
}

export async function rowsOf(db: Db, table: string) {
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by 1`.execute(db);
  return rows;
}

export async function eventsInLog(db: Kysely<any>) {
  const { rows } = await sql<{ event_id: string; stream_id: string; stream_version: number; event_type: string }>`
    select event_id, stream_id, stream_version, event_type from events order by global_position`.execute(db);
  return rows;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A projector written out by hand, to test the runner's own contract (its own guard, or
 * none: a deliberately non-idempotent one): no kernel guard, and its inline and batch paths
 * apply event by event unless it brings a batch path of its own.
 */
export function handWritten(p: Omit<Projector, 'guarded' | 'applyNew' | 'applyBatch'> & { applyBatch?: Projector['applyBatch'] | undefined }): Projector {
  const { name, version, mode, handles, tables, reads, apply } = p;
  return {
    name,
    version,
    mode,
    handles,
    tables,
    ...(reads ? { reads } : {}),
    guarded: [],
    apply,
    applyNew: apply,
    applyBatch:
      p.applyBatch ??
      (async (events, trx) => {
        for (const event of events) await apply(event, trx);
      }),
  };
}
