import * as crypto from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/**
 * JSON with object keys sorted at every level, so equal values always give equal bytes.
 * Written as loops over plain strings: every append and every sealed event goes through
 * it, and the entries/sort/map/join version cost a tenth of a write's CPU.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  // The default sort orders by UTF-16 code units, as `<` on strings does.
  const keys = Object.keys(object).sort();
  let out = '{';
  for (const key of keys) {
    const field = object[key];
    if (field === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(field);
  }
  return `${out}}`;
}

export interface HashedFields {
  streamId: string;
  streamVersion: number;
  eventId: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: unknown;
  occurredAt: Date;
}

/** An event's canonical bytes: what its hash and its seal leaf's content digest cover. */
export function canonicalEvent(event: HashedFields): string {
  return canonicalJson({
    stream_id: event.streamId,
    stream_version: event.streamVersion,
    event_id: event.eventId,
    event_type: event.type,
    schema_version: event.schemaVersion,
    data: event.data,
    metadata: event.metadata,
    occurred_at: event.occurredAt.toISOString(),
  });
}

/** SHA-256 over the previous event's hash in the stream and this event's canonical bytes. */
export function eventHash(previousHash: string, event: HashedFields): string {
  return sha256Hex(`${previousHash}\n${canonicalEvent(event)}`);
}

/**
 * An event's hash on its stream's chain and its content digest (seal.ts: the hash with no
 * previous hash), from one canonical serialisation: verify and import need both per event.
 */
export function eventDigests(previousHash: string, event: HashedFields): { hash: string; content: string } {
  const body = canonicalEvent(event);
  return { hash: sha256Hex(`${previousHash}\n${body}`), content: sha256Hex(`\n${body}`) };
}

const oneShot = typeof crypto.hash === 'function';

/**
 * One-shot SHA-256 (node ≥ 20.12's crypto.hash: half the cost of createHash().update().digest()
 * on an event's few hundred bytes). Hashing a concatenation gives the bytes of hashing its
 * pieces in turn: the UTF-8 of a concatenation is the concatenation of the UTF-8s when no
 * lone surrogate pairs up across a boundary, and canonical JSON and hex hold none.
 */
export const sha256Hex: (value: string) => string = oneShot
  ? (value) => crypto.hash('sha256', value, 'hex')
  : (value) => crypto.createHash('sha256').update(value).digest('hex');

/** SHA-256 as bytes, one-shot (as sha256Hex). */
export const sha256: (value: string | Uint8Array) => Buffer = oneShot
  ? (value) => crypto.hash('sha256', value, 'buffer')
  : (value) => crypto.createHash('sha256').update(value).digest();
