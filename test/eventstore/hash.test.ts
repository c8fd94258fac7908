import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, canonicalEvent, canonicalJson, eventHash } from '../../src/eventstore/hash.js';

/** The first canonicalJson, kept as the oracle: every stored hash was made with its bytes. */
function referenceCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(referenceCanonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${referenceCanonicalJson(v)}`).join(',')}}`;
}

const leaf = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.date({ noInvalidDate: true }),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('any'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('a', 'B', '_', 'é', '10', '9', '__proto__x')), tie('any'), { maxKeys: 6 }),
})).any;

describe('canonicalJson', () => {
  it('gives the bytes the stored hashes were made with, for any JSON-like value', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(referenceCanonicalJson(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts keys at every level and drops undefined fields', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, undefined, { z: 1, y: 2 }], c: undefined }, A: 'x' })).toBe('{"A":"x","a":{"d":[1,null,{"y":2,"z":1}]},"b":1}');
  });

  it('writes an event as canonicalJson writes its fields', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer(), fc.string(), fc.string(), fc.integer(), value, value, fc.date({ noInvalidDate: true }), (streamId, streamVersion, eventId, type, schemaVersion, data, metadata, occurredAt) => {
        const event = { streamId, streamVersion, eventId, type, schemaVersion, data, metadata, occurredAt };
        const fields = {
          stream_id: streamId,
          stream_version: streamVersion,
          event_id: eventId,
          event_type: type,
          schema_version: schemaVersion,
          data,
          metadata,
          occurred_at: occurredAt.toISOString(),
        };
        expect(canonicalEvent(event)).toBe(referenceCanonicalJson(fields));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps an event hash made before the rewrite', () => {
    const hash = eventHash(GENESIS_HASH, {
      streamId: 'user-1',
      streamVersion: 1,
      eventId: '01a20922-1aca-776a-b4b3-8473d22203c8',
      type: 'UserStatusSet',
      schemaVersion: 1,
      data: { id: 1, emoji: 'coffee', message: 'hi', message_html: 'hi' },
      metadata: { actor_id: 1, token_id: 1, ip: '127.0.0.1' },
      occurredAt: new Date('2026-11-23T15:59:19.754Z'),
    });
    expect(hash).toBe('d1b8c275b7aec4b96086e744cbadb68635b5f8aa778a34790a7eaced4e2fe099');
  });
});
