import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/**
 * JSON with object keys sorted at every level, so equal values always give equal bytes.
 * Written as loops over plain strings: every append and every sealed event goes through
 * it, and the entries/sort/map/join version cost a tenth of a write's CPU.
 */
export function canonicalJson(value: unknown): string {
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

/** SHA-256 over the previous event's hash in the stream and this event's canonical bytes. */
export function eventHash(previousHash: string, event: HashedFields): string {
  const body = canonicalJson({
    stream_id: event.streamId,
    stream_version: event.streamVersion,
    event_id: event.eventId,
    event_type: event.type,
    schema_version: event.schemaVersion,
    data: event.data,
    metadata: event.metadata,
    occurred_at: event.occurredAt.toISOString(),
  });
  return createHash('sha256').update(previousHash).update('\n').update(body).digest('hex');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
