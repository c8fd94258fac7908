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
  it('gives each id once beside other processes and plain nextval, in the order a process asks', async () => {
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
  });

  it('takes a block in one statement: ids a process hands out later were taken before a plain nextval in between', async () => {
    const blocks = new IdBlocks();
    const first = await blocks.next(handle.db, 'environments_id_seq');
    const between = await nextId(handle.db, 'environments_id_seq');
    const rest: number[] = [];
    for (let i = 1; i < 20; i++) rest.push(await blocks.next(handle.db, 'environments_id_seq'));
    expect(rest.every((id) => id > first && id < between)).toBe(true);
    // The block is spent: the next id comes from a new block, after the plain one.
    expect(await blocks.next(handle.db, 'environments_id_seq')).toBeGreaterThan(between);
  });
});
