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
  const tx = compareDecimals(a.transactionId, b.transactionId);
  return tx !== 0 ? tx : compareDecimals(a.globalPosition, b.globalPosition);
}

/**
 * Two whole numbers written in decimal: the shorter is the smaller when neither has a sign or
 * a leading zero (every id the database gives; verify and import compare several per event),
 * else by value.
 */
function compareDecimals(a: string, b: string): number {
  if (plainDecimal(a) && plainDecimal(b)) {
    if (a.length !== b.length) return a.length < b.length ? -1 : 1;
    return a === b ? 0 : a < b ? -1 : 1;
  }
  const d = BigInt(a) - BigInt(b);
  return d === 0n ? 0 : d < 0n ? -1 : 1;
}

/** Digits only, and no leading zero (or "0" itself). */
function plainDecimal(n: string): boolean {
  if (n.length === 0 || (n.charCodeAt(0) === 48 && n.length > 1)) return false;
  for (let i = 0; i < n.length; i++) {
    const c = n.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
