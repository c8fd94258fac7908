import * as crypto from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/**
 * JSON with object keys sorted at every level, so equal values always give equal bytes.
 * Written as loops over plain strings: every append and every sealed event goes through
 * it, and the entries/sort/map/join version cost a tenth of a write's CPU. Keys already in
 * order (most objects) are not sorted again, and the quoted form of the keys seen most
 * often is kept (event data repeats a few hundred field names).
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
  const keys = Object.keys(object);
  // The default sort orders by UTF-16 code units, as `<` on strings does.
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  for (const key of keys) {
    const field = object[key];
    if (field === undefined) continue;
    out += (out.length === 1 ? '' : ',') + quotedKey(key) + ':' + canonicalJson(field);
  }
  return `${out}}`;
}

const QUOTED_KEYS_KEPT = 4096;
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < QUOTED_KEYS_KEPT) quotedKeys.set(key, quoted);
  }
  return quoted;
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
  if (event.data === undefined || event.metadata === undefined) return canonicalJson(eventObject(event));
  // canonicalJson(eventObject(event)), its keys written in their sorted order.
  return (
    `{"data":${canonicalJson(event.data)},"event_id":${canonicalJson(event.eventId)},"event_type":${canonicalJson(event.type)},` +
    `"metadata":${canonicalJson(event.metadata)},"occurred_at":${canonicalJson(event.occurredAt.toISOString())},` +
    `"schema_version":${canonicalJson(event.schemaVersion)},"stream_id":${canonicalJson(event.streamId)},"stream_version":${canonicalJson(event.streamVersion)}}`
  );
}

function eventObject(event: HashedFields): Record<string, unknown> {
  return {
    stream_id: event.streamId,
    stream_version: event.streamVersion,
    event_id: event.eventId,
    event_type: event.type,
    schema_version: event.schemaVersion,
    data: event.data,
    metadata: event.metadata,
    occurred_at: event.occurredAt.toISOString(),
  };
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

/**
 * SHA-256 as bytes, one-shot (as sha256Hex). By way of a 'binary' (latin1) string (one char per byte,
 * exact): a small Buffer from it comes from node's pool, half the cost of the digest's own
 * 'buffer' output, and the Merkle trees take several per event.
 */
export const sha256: (value: string | Uint8Array) => Buffer = oneShot
  ? (value) => Buffer.from(crypto.hash('sha256', value, 'binary'), 'binary')
  : (value) => crypto.createHash('sha256').update(value).digest();
