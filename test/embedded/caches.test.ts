import { describe, expect, it } from 'vitest';
import { STREAM_CACHE_CAPACITY, StreamStateCache } from '../../src/commands/kernel/stream-cache.js';
import { CREDENTIAL_CACHE_CAPACITY, CredentialCache, type Credentials } from '../../src/http/kernel/credentials.js';
import { LruMap } from '../../src/lru.js';
import { MAX_NAMED, MAX_SEEN, StatementNames } from '../../src/database/pg-client.js';

// The per-process caches are bounded (README: Memory): filled with ten times their capacity,
// they hold their capacity, and what they forget is what was used least recently.

describe('LruMap', () => {
  it('never holds more than its capacity and forgets the least recently used first', () => {
    const lru = new LruMap<string, number>(3);
    for (const key of ['a', 'b', 'c']) lru.set(key, 1);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('b', 2); // so is b, rewritten
    lru.set('d', 1);
    expect([...lru.keys()]).toEqual(['a', 'b', 'd']);
    for (let i = 0; i < 30; i++) {
      lru.set(`k${i}`, i);
      expect(lru.size).toBeLessThanOrEqual(3);
    }
    expect([...lru.keys()]).toEqual(['k27', 'k28', 'k29']);
    expect(() => new LruMap(0)).toThrow('capacity');
  });
});

describe('StreamStateCache', () => {
  const deciderA = {};
  const deciderB = {};
  const folded = (version: number) => ({ version, state: { version }, hash: `h${version}` });

  it(`holds at most its capacity (${STREAM_CACHE_CAPACITY} by default) whatever the number of streams`, () => {
    const cache = new StreamStateCache();
    for (let i = 0; i < STREAM_CACHE_CAPACITY * 10; i++) cache.set(i % 2 ? deciderA : deciderB, `stream-${i}`, folded(i));
    expect(cache.size).toBe(STREAM_CACHE_CAPACITY);
    expect(cache.get(deciderB, 'stream-0')).toBeUndefined();
    expect(cache.get(deciderA, `stream-${STREAM_CACHE_CAPACITY * 10 - 1}`)).toMatchObject({ version: STREAM_CACHE_CAPACITY * 10 - 1 });
  });

  it('forgets the least recently used stream, a read counting as a use, per decider', () => {
    const cache = new StreamStateCache(3);
    cache.set(deciderA, 's1', folded(1));
    cache.set(deciderB, 's1', folded(2)); // the same stream under another decider is another entry
    cache.set(deciderA, 's2', folded(3));
    expect(cache.get(deciderA, 's1')).toMatchObject({ version: 1 });
    cache.set(deciderA, 's3', folded(4));
    expect(cache.size).toBe(3);
    expect(cache.get(deciderB, 's1')).toBeUndefined();
    expect(cache.get(deciderA, 's1')).toMatchObject({ version: 1 });
    cache.delete(deciderA, 's1');
    expect(cache.size).toBe(2);
  });
});

describe('CredentialCache', () => {
  const credentials = (id: number) => ({ token: { id }, user: { id } }) as unknown as Credentials;

  it(`holds at most its capacity (${CREDENTIAL_CACHE_CAPACITY} by default) and forgets the least recently used token`, () => {
    const cache = new CredentialCache();
    let largest = 0;
    let kept = true;
    for (let i = 0; i < CREDENTIAL_CACHE_CAPACITY * 10; i++) {
      cache.set(`digest-${i}`, credentials(i));
      largest = Math.max(largest, cache.size);
      // A token in use all along stays.
      kept &&= cache.get('digest-0') !== undefined;
    }
    expect(largest).toBe(CREDENTIAL_CACHE_CAPACITY);
    expect(kept).toBe(true);
    expect(cache.size).toBe(CREDENTIAL_CACHE_CAPACITY);
    expect(cache.get('digest-0')).toMatchObject({ token: { id: 0 } });
    expect(cache.get('digest-1')).toBeUndefined();
    expect(cache.get(`digest-${CREDENTIAL_CACHE_CAPACITY * 10 - 1}`)).toMatchObject({ token: { id: CREDENTIAL_CACHE_CAPACITY * 10 - 1 } });
  });
});

describe('StatementNames (prepared statements)', () => {
  it(`gives at most ${MAX_NAMED} names, so no connection prepares more, and remembers at most ${MAX_SEEN} texts seen once`, () => {
    const names = new StatementNames();
    const hot = 'select * from users where id = $1';
    names.nameOf(hot);
    const hotName = names.nameOf(hot);
    expect(hotName).toMatch(/^forgelog_\d+$/);
    let mostNamed = 0;
    let mostSeen = 0;
    for (let i = 0; i < MAX_SEEN * 3; i++) {
      const text = `select * from projects where id in (${Array.from({ length: (i % 50) + 1 }, (_, n) => `$${n + 1}`).join(', ')}) -- ${i}`;
      names.nameOf(text);
      if (i % 2) names.nameOf(text); // every other text comes back and is named while names remain
      mostNamed = Math.max(mostNamed, names.named);
      mostSeen = Math.max(mostSeen, names.seenOnce);
    }
    expect(mostNamed).toBe(MAX_NAMED);
    expect(mostSeen).toBeLessThanOrEqual(MAX_SEEN);
    expect(names.named).toBe(MAX_NAMED);
    // The statements named before the cap keep their names.
    expect(names.nameOf(hot)).toBe(hotName);
    // A stale plan's text loses its name; past the cap it is not named again (sent unnamed).
    names.forget(hot);
    names.nameOf(hot);
    expect(names.nameOf(hot)).toBeUndefined();
    expect(names.named).toBe(MAX_NAMED);
  });
});
