import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every level, so equal values always give equal bytes. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
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
