import { sql, type CompiledQuery, type Insertable, type Kysely, type Selectable } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../database/database.js';
import { precompiled, type Slot } from '../precompiled.js';
import { feedColumns } from './feed-index.js';
import { GENESIS_HASH, eventHash } from './hash.js';
import type { EventsTable } from './tables.js';
import { checkpointOf, type Checkpoint, type EventMetadata, type LoggedEvent, type NewEvent, type ProjectedEvent, type StoredEvent } from './types.js';
import { upcast } from './upcasters.js';

/** The columns a LoggedEvent is made of: what a rebuild reads. */
export const PROJECTED_EVENT_COLUMNS = [
  'global_position',
  'transaction_id',
  'stream_id',
  'stream_version',
  'event_id',
  'event_type',
  'schema_version',
  'data',
  'occurred_at',
] as const;
/** The columns a StoredEvent is made of (the feed index columns are not among them). */
export const STORED_EVENT_COLUMNS = [...PROJECTED_EVENT_COLUMNS, 'metadata', 'actor_id', 'hash'] as const;
type StoredEventRow = Pick<Selectable<EventsTable>, (typeof STORED_EVENT_COLUMNS)[number]>;
type ProjectedEventRow = Pick<Selectable<EventsTable>, (typeof PROJECTED_EVENT_COLUMNS)[number]>;

export function toLoggedEvent(row: ProjectedEventRow): LoggedEvent {
  const current = upcast(row.event_type, row.schema_version, row.data);
  return {
    globalPosition: row.global_position,
    transactionId: row.transaction_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    eventId: row.event_id,
    type: row.event_type,
    schemaVersion: current.schemaVersion,
    data: current.data,
    occurredAt: row.occurred_at,
  };
}

export function toStoredEvent(row: StoredEventRow): StoredEvent {
  const event = toLoggedEvent(row) as { -readonly [K in keyof StoredEvent]: StoredEvent[K] };
  event.metadata = row.metadata;
  event.actorId = row.actor_id;
  event.hash = row.hash;
  return event;
}

const streamEvents = precompiled((db: Kysely<Database>, streamId: Slot<string>, afterVersion: Slot<number>) =>
  db.selectFrom('events').select(STORED_EVENT_COLUMNS).where('stream_id', '=', streamId).where('stream_version', '>', afterVersion).orderBy('stream_version'),
);

/** The events of one stream in version order (those after `afterVersion`, when given). */
export async function readStream(db: Kysely<Database>, streamId: string, afterVersion = 0): Promise<StoredEvent[]> {
  return (await streamEvents.execute(db, streamId, afterVersion)).map(toStoredEvent);
}

export interface AppendInput {
  streamId: string;
  /** The version the stream must be at (0 = the stream must not exist). */
  expectedVersion: number;
  /** The hash of the stream's head event (GENESIS_HASH for a new stream). */
  headHash: string;
  events: readonly NewEvent[];
  metadata: EventMetadata;
  occurredAt: Date;
}

/** The events table's columns an append writes, in the order the one-event insert binds them. */
const COLUMNS = ['stream_id', 'stream_version', 'event_id', 'event_type', 'schema_version', 'data', 'metadata', 'actor_id', 'project_id', 'group_id', 'target_type', 'target_id', 'occurred_at', 'hash'] as const;
type EventInsert = { [K in (typeof COLUMNS)[number]]: Insertable<EventsTable>[K] };

const insertOneEvent = precompiled((db: Kysely<Database>, ...values: Slot<unknown>[]) =>
  db
    .insertInto('events')
    .values(Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as unknown as EventInsert)
    .returning(['stream_version', 'global_position', 'transaction_id']),
);

/** What an append inserts, and how the inserted rows become StoredEvents. */
export interface AppendPlan {
  /** The INSERT of the events, returning their versions and positions. */
  readonly insert: CompiledQuery<InsertedPosition>;
  /** The events as stored, given the rows the INSERT returned. */
  stored(inserted: readonly InsertedPosition[]): StoredEvent[];
  /** The events as projectors see them, before the INSERT has run. */
  pending(): ProjectedEvent[];
}
type InsertedPosition = Pick<Selectable<EventsTable>, 'stream_version' | 'global_position' | 'transaction_id'>;
const UNPLACED: InsertedPosition = { stream_version: 0, global_position: '', transaction_id: '' };

/** Hashes the events onto the stream's chain and builds their INSERT (see appendToStream). */
export function planAppend(db: Kysely<Database>, input: AppendInput): AppendPlan {
  let previous = input.headHash;
  const occurredAt = input.occurredAt.toISOString();
  const rows = input.events.map((event, i) => {
    const streamVersion = input.expectedVersion + i + 1;
    const eventId = uuidv7();
    const schemaVersion = event.schemaVersion ?? 1;
    const hash = eventHash(previous, {
      streamId: input.streamId,
      streamVersion,
      eventId,
      type: event.type,
      schemaVersion,
      data: event.data,
      metadata: input.metadata,
      occurredAt: input.occurredAt,
    });
    previous = hash;
    return {
      stream_id: input.streamId,
      stream_version: streamVersion,
      event_id: eventId,
      event_type: event.type,
      schema_version: schemaVersion,
      data: JSON.stringify(event.data),
      metadata: JSON.stringify(input.metadata),
      ...feedColumns(event.index, input.metadata),
      occurred_at: occurredAt,
      hash,
    };
  });
  // What the log holds, without reading it back: the payloads as JSON gives them.
  const event = (row: (typeof rows)[number], position: InsertedPosition): StoredEvent => ({
    globalPosition: position.global_position,
    transactionId: position.transaction_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    eventId: row.event_id,
    type: row.event_type,
    schemaVersion: row.schema_version,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as EventMetadata,
    actorId: row.actor_id,
    occurredAt: new Date(row.occurred_at),
    hash: row.hash,
  });
  return {
    insert:
      rows.length === 1
        ? insertOneEvent.compile(db, ...COLUMNS.map((column) => rows[0]![column]))
        : db.insertInto('events').values(rows).returning(['stream_version', 'global_position', 'transaction_id']).compile(),
    stored(inserted) {
      const positions = new Map(inserted.map((row) => [row.stream_version, row]));
      return rows.map((row) => event(row, positions.get(row.stream_version)!));
    },
    pending() {
      // The position fields stay empty: a ProjectedEvent has none to read.
      return rows.map((row) => event(row, UNPLACED));
    },
  };
}

/**
 * Appends events at the expected version. A concurrent append to the same stream makes
 * this fail with a unique violation (23505) on (stream_id, stream_version); the caller
 * retries. Run it inside the command's transaction.
 */
export async function appendToStream(trx: Kysely<Database>, input: AppendInput): Promise<StoredEvent[]> {
  const plan = planAppend(trx, input);
  const { rows } = await trx.executeQuery(plan.insert);
  return plan.stored(rows);
}

/** Events after a checkpoint, in the gap-free order (transaction_id, global_position). */
export const afterCheckpoint = (at: Checkpoint) =>
  sql<boolean>`(transaction_id, global_position) > (${at.transactionId}::xid8, ${at.globalPosition}::bigint)`;

/** Events up to and including a checkpoint, in the gap-free order. */
export const throughCheckpoint = (at: Checkpoint) =>
  sql<boolean>`(transaction_id, global_position) <= (${at.transactionId}::xid8, ${at.globalPosition}::bigint)`;

/** Events of transactions older than every one still running: nothing can commit before them any more. */
export const BELOW_HORIZON = sql<boolean>`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`;

/**
 * Whether committed events wait after `at`. Asked by a reader that has read all it could see
 * in gap-free order, it means a transaction elsewhere in the cluster, older than theirs, still
 * runs: the reader retries shortly, since no append will wake it when that transaction ends
 * (it may be another database's).
 */
export async function heldBack(db: Kysely<Database>, at: Checkpoint): Promise<boolean> {
  const { rows } = await sql<{ hidden: boolean }>`
    select exists (select 1 from events where ${afterCheckpoint(at)}) as hidden`.execute(db);
  return rows[0]?.hidden === true;
}

/**
 * Reads the global log after a checkpoint in gap-free order: only events of transactions
 * older than every transaction still running, ordered by (transaction_id, global_position),
 * so an event that commits late with a smaller position is never skipped.
 */
export async function readAllAfter(db: Kysely<Database>, after: Checkpoint, limit: number): Promise<StoredEvent[]> {
  const rows = await db
    .selectFrom('events')
    .select(STORED_EVENT_COLUMNS)
    .where(afterCheckpoint(after))
    .where(BELOW_HORIZON)
    .orderBy('transaction_id')
    .orderBy('global_position')
    .limit(limit)
    .execute();
  return rows.map(toStoredEvent);
}

/** What a follower's step reads of the log: see readTypesAfter. */
export interface TypedRead {
  readonly events: StoredEvent[];
  /** How far the log has been read: past the last event returned when the rest were of other types. */
  readonly through: Checkpoint;
  /**
   * Committed events wait after the visible horizon (heldBack): a transaction elsewhere in the
   * cluster, older than theirs, still runs.
   */
  readonly heldBack: boolean;
}

/**
 * For a follower that reads a few event types: those events after a checkpoint, in gap-free
 * order, without reading the others — in one statement, so one snapshot: the gap-free horizon
 * (everything up to it is committed), the events of those types up to it, and whether committed
 * events wait beyond it.
 */
export async function readTypesAfter(db: Kysely<Database>, after: Checkpoint, types: readonly string[], limit: number): Promise<TypedRead> {
  // By the xid8 column (events.…): by the text alias, '999' would sort after '1156'.
  const { rows } = await sql<StoredEventRow & { head_transaction_id: string | null; head_global_position: string | null; held_back: boolean }>`
    select h.head_transaction_id, h.head_global_position, x.held_back, ${sql.join(STORED_EVENT_COLUMNS.map((column) => sql.ref(`p.${column}`)))}
      from (select 1) as one
      left join lateral (
        select events.transaction_id as head_xid, events.transaction_id::text as head_transaction_id, events.global_position as head_global_position from events
         where ${afterCheckpoint(after)} and ${BELOW_HORIZON}
         order by events.transaction_id desc, events.global_position desc limit 1) h on true
      cross join lateral (select exists (select 1 from events where ${afterCheckpoint(after)} and not ${BELOW_HORIZON}) as held_back) x
      left join lateral (
        select ${sql.join(STORED_EVENT_COLUMNS.map((column) => sql.ref(column)))} from events
         where ${afterCheckpoint(after)}
           and (events.transaction_id, events.global_position) <= (h.head_xid, h.head_global_position)
           and events.event_type = any(${[...types]}::text[])
         order by events.transaction_id, events.global_position limit ${limit}) p on true
     order by p.transaction_id, p.global_position`.execute(db);
  const first = rows[0]!;
  const heldBack = first.held_back === true;
  if (first.head_transaction_id === null) return { events: [], through: after, heldBack };
  const events = rows.filter((row) => row.event_id !== null).map(toStoredEvent);
  const horizon: Checkpoint = { transactionId: first.head_transaction_id, globalPosition: String(first.head_global_position) };
  return { events, through: events.length === limit ? checkpointOf(events.at(-1)!) : horizon, heldBack };
}

export { GENESIS_HASH, checkpointOf };
