import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { IdBlocks } from '../../src/commands/kernel/id-blocks.js';
import { nextId } from '../../src/commands/kernel/handler.js';
import { openTestDatabase } from '../support/database.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

describe('ids taken a block at a time', () => {
  it('gives each id once beside other processes and plain nextval, in the order a process asks, a block per statement', async () => {
    const one = new IdBlocks();
    const two = new IdBlocks(); // another process's
    const ofOne: number[] = [];
    const taken: number[] = [];
    for (let i = 0; i < 30; i++) {
      // At once, as concurrent requests and processes take them.
      const [a, b, c, d] = await Promise.all([
        one.next(handle.db, 'environments_id_seq'),
        one.next(handle.db, 'environments_id_seq'),
        two.next(handle.db, 'environments_id_seq'),
        nextId(handle.db, 'environments_id_seq'),
      ]);
      ofOne.push(a, b);
      taken.push(a, b, c, d);
    }
    expect(new Set(taken).size).toBe(taken.length);
    expect(ofOne).toEqual([...ofOne].sort((x, y) => x - y));
    // One statement takes a block: its ids are consecutive values of the sequence.
    const firstBlock = ofOne.slice(0, 20);
    expect(firstBlock).toEqual(Array.from({ length: 20 }, (_, k) => firstBlock[0]! + k));
  });
});
