import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle, Db } from '../../src/database/database.js';
import { precompiled, type Slot } from '../../src/precompiled.js';
import { openTestDatabase } from '../support/database.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
  await sql`create table precompiled_probe (id integer primary key, kind text not null, label text)`.execute(handle.db);
  await sql`insert into precompiled_probe values (1, 'a', 'one'), (2, 'b', 'two'), (3, 'a', null)`.execute(handle.db);
});
afterAll(() => handle.close());

describe('precompiled queries', () => {
  // A constant ('a') between two slots: the slots take the arguments, the constant stays.
  const probe = precompiled((db: Db, min: Slot<number>, max: Slot<number>) =>
    db
      .selectFrom('precompiled_probe' as never)
      .select(['id' as never, 'label' as never])
      .where('id' as never, '>=', min as never)
      .where('kind' as never, '=', 'a' as never)
      .where('id' as never, '<=', max as never)
      .orderBy('id' as never),
  );

  it('bind each run its own values, keep the constants, and run inside transactions', async () => {
    expect(await probe.execute(handle.db, 1, 3)).toEqual([{ id: 1, label: 'one' }, { id: 3, label: null }]);
    expect(await probe.execute(handle.db, 2, 3)).toEqual([{ id: 3, label: null }]);
    expect(await probe.takeFirst(handle.db, 4, 9)).toBeUndefined();
    const inside = await handle.db.transaction().execute(async (trx) => {
      await sql`insert into precompiled_probe values (4, 'a', 'four')`.execute(trx);
      return probe.execute(trx, 4, 4);
    });
    expect(inside).toEqual([{ id: 4, label: 'four' }]);
  });
});
