import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/database/database.js';
import { isConnectionError } from '../../src/database/pg-client.js';
import { readTogether } from '../../src/database/read-together.js';
import { describeOnPostgres, openTestDatabase } from '../support/database.js';

/** src/database/pipeline.ts: the statements sent outside a transaction, pipelined. */
describeOnPostgres('the pipeline (PGlite has no connections)', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase({ poolSize: 2 });
    await sql`create table pipeline_probe (id integer primary key, label text not null)`.execute(handle.db);
  });
  afterAll(() => handle.close());

  const backendPid = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db)).rows[0]!.pid;

  /** How many times the pool lends a connection while `fn` runs. */
  async function poolCheckouts(fn: () => Promise<unknown>): Promise<number> {
    let lent = 0;
    const count = () => void lent++;
    handle.pool!.on('acquire', count);
    try {
      await fn();
    } finally {
      handle.pool!.off('acquire', count);
    }
    return lent;
  }

  it('sends the reads of one turn of the event loop on one connection, apart from the pool', async () => {
    let pids: number[] = [];
    expect(await poolCheckouts(async () => (pids = await Promise.all(Array.from({ length: 12 }, backendPid))))).toBe(0);
    expect(new Set(pids).size).toBe(1);
    expect(handle.pipeline!.open).toBe(1);
  });

  it('sends writes, row locks and advisory locks to the pool', async () => {
    const pipelinePid = await backendPid();
    const write = sql<{ pid: number }>`insert into pipeline_probe values (10, 'ten') returning pg_backend_pid() as pid`;
    const locking = sql<{ pid: number }>`select pg_backend_pid() as pid from pipeline_probe where id = 10 for update`;
    const advisory = sql<{ pid: number; locked: boolean }>`select pg_backend_pid() as pid, pg_try_advisory_lock(42, 42) as locked`;
    let pids: number[] = [];
    const lent = await poolCheckouts(async () => {
      pids = [(await write.execute(handle.db)).rows[0]!.pid, (await locking.execute(handle.db)).rows[0]!.pid];
      // A lock that may be waited for, even one that ends with its statement.
      pids.push((await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_advisory_xact_lock(42, 43)`.execute(handle.db)).rows[0]!.pid);
      await handle.db.connection().execute(async (connection) => {
        const taken = (await advisory.execute(connection)).rows[0]!;
        expect(taken.locked).toBe(true);
        // The unlock reaches the session that holds the lock.
        expect((await sql<{ released: boolean }>`select pg_advisory_unlock(42, 42) as released`.execute(connection)).rows[0]!.released).toBe(true);
        pids.push(taken.pid);
      });
    });
    expect(lent).toBe(4);
    expect(pids).not.toContain(pipelinePid);
    await sql`delete from pipeline_probe where id = 10`.execute(handle.db);
  });

  it('fails a statement alone: the others sent with it answer', async () => {
    const [good, bad, after] = await Promise.allSettled([
      sql<{ x: number }>`select 1 as x`.execute(handle.db),
      sql`select 1 / 0`.execute(handle.db),
      sql<{ y: number }>`select 2 as y`.execute(handle.db),
    ]);
    expect(good).toMatchObject({ status: 'fulfilled', value: { rows: [{ x: 1 }] } });
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
    expect(after).toMatchObject({ status: 'fulfilled', value: { rows: [{ y: 2 }] } });
  });

  it('writes outside a transaction commit each on its own; a transaction holds a connection of the pool to the end', async () => {
    await handle.db.insertInto('pipeline_probe' as never).values({ id: 1, label: 'one' } as never).execute();
    const failed = await handle.db
      .insertInto('pipeline_probe' as never)
      .values({ id: 1, label: 'again' } as never)
      .execute()
      .then(() => undefined, (error: unknown) => error);
    expect(failed).toMatchObject({ code: '23505' });
    const pipelinePid = await backendPid();
    await handle.db.transaction().execute(async (trx) => {
      const pid = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
      const [first, second] = [await pid(), await pid()];
      expect(first).toBe(second);
      expect(first).not.toBe(pipelinePid);
      await sql`insert into pipeline_probe values (2, 'two')`.execute(trx);
      // Not committed yet: a read outside the transaction does not see it.
      expect((await sql`select 1 from pipeline_probe where id = 2`.execute(handle.db)).rows).toEqual([]);
    });
    expect((await sql<{ label: string }>`select label from pipeline_probe order by id`.execute(handle.db)).rows).toEqual([{ label: 'one' }, { label: 'two' }]);
  });

  it('reads read together in one snapshot: a read-only repeatable-read transaction', async () => {
    const [isolation, readOnly] = await readTogether(handle.db, [
      sql<{ level: string }>`select current_setting('transaction_isolation') as level`.compile(handle.db),
      sql<{ ro: string }>`select current_setting('transaction_read_only') as ro`.compile(handle.db),
    ] as const);
    expect([isolation, readOnly]).toEqual([[{ level: 'repeatable read' }], [{ ro: 'on' }]]);
    // The connection is out of the transaction after it: a write outside one commits.
    await handle.db.insertInto('pipeline_probe' as never).values({ id: 3, label: 'three' } as never).execute();
    expect((await sql`select 1 from pipeline_probe where id = 3`.execute(handle.db)).rows).toHaveLength(1);
  });

  it('a dropped connection fails its statements as the database being away, and the next statement opens another', async () => {
    const pid = await backendPid();
    const admin = new pg.Client({ connectionString: (handle.pool!.options as { connectionString: string }).connectionString });
    await admin.connect();
    try {
      const slow = sql`select pg_sleep(5)`.execute(handle.db).then(() => undefined, (error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await admin.query('select pg_terminate_backend($1)', [pid]);
      expect(isConnectionError(await slow)).toBe(true);
    } finally {
      await admin.end();
    }
    const next = await backendPid();
    expect(next).not.toBe(pid);
  });

  it('is off with FORGELOG_PIPELINE=off, and refuses another value', async () => {
    const url = (handle.pool!.options as { connectionString: string }).connectionString;
    process.env.FORGELOG_PIPELINE = 'off';
    const plain = await openDatabase({ databaseUrl: url, poolSize: 1 }).finally(() => delete process.env.FORGELOG_PIPELINE);
    try {
      expect(plain.pipeline).toBeUndefined();
      expect((await sql<{ x: number }>`select 1 as x`.execute(plain.db)).rows).toEqual([{ x: 1 }]);
      expect(plain.pool!.totalCount).toBe(1);
    } finally {
      await plain.close();
    }
    process.env.FORGELOG_PIPELINE = 'sometimes';
    await expect(openDatabase({ databaseUrl: url })).rejects.toThrow('FORGELOG_PIPELINE must be on or off');
    delete process.env.FORGELOG_PIPELINE;
  });
});
