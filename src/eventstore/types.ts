import type { EventMetadataRow } from './tables.js';

export type EventMetadata = EventMetadataRow;

/** Columns the feeds filter on, extracted from an event when it is appended. */
export interface EventIndex {
  projectId?: number | null;
  groupId?: number | null;
  targetType?: string | null;
  targetId?: number | null;
}

/** What a decider emits: a type, its payload and (optionally) feed index columns. */
export interface NewEvent<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
  readonly schemaVersion?: number;
  readonly index?: EventIndex;
}

/** An event as stored in the log. Positions are decimal strings (int8). */
export interface StoredEvent<T extends string = string, D = unknown> {
  readonly globalPosition: string;
  readonly transactionId: string;
  readonly streamId: string;
  readonly streamVersion: number;
  readonly eventId: string;
  readonly type: T;
  readonly schemaVersion: number;
  readonly data: D;
  readonly metadata: EventMetadata;
  readonly actorId: number | null;
  readonly occurredAt: Date;
  readonly hash: string;
}

/**
 * What a projector reads of an event. Not its metadata, actor or hash: a rebuild reads and
 * decodes only the columns of a LoggedEvent (PROJECTED_EVENT_COLUMNS in store.ts). Nor its
 * place in the log: a write may send its projections' statements before the database has
 * given the event one (src/commands/kernel/one-round-trip.ts).
 */
export type ProjectedEvent<T extends string = string, D = unknown> = Omit<StoredEvent<T, D>, 'metadata' | 'actorId' | 'hash' | 'globalPosition' | 'transactionId'>;

/** A ProjectedEvent read from the log, with its place there (a rebuild pages by it). */
export type LoggedEvent = ProjectedEvent & Checkpoint;

/** A position in the gap-free order of the global log. */
export interface Checkpoint {
  readonly transactionId: string;
  readonly globalPosition: string;
}

export const LOG_START: Checkpoint = { transactionId: '0', globalPosition: '0' };

export function checkpointOf(event: Pick<StoredEvent, 'transactionId' | 'globalPosition'>): Checkpoint {
  return { transactionId: event.transactionId, globalPosition: event.globalPosition };
}

/** Orders checkpoints in the gap-free order: negative, zero or positive like a comparator. */
export function compareCheckpoints(a: Checkpoint, b: Checkpoint): number {
  const tx = BigInt(a.transactionId) - BigInt(b.transactionId);
  if (tx !== 0n) return tx < 0n ? -1 : 1;
  const pos = BigInt(a.globalPosition) - BigInt(b.globalPosition);
  return pos === 0n ? 0 : pos < 0n ? -1 : 1;
}
