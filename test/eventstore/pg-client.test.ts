import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/database/database.js';
import fc from 'fast-check';
import { StatementNames, isStalePreparedPlan, transactionInOneRoundTrip, useFastRowTemplates, useFastTimestamps } from '../../src/database/pg-client.js';
import { describeOnPostgres, openTestDatabase } from '../support/database.js';
import { roundTrips } from '../support/round-trips.js';
import { batchInTransaction, readTogether } from '../../src/database/read-together.js';
import type { Db } from '../../src/database/database.js';

type ResultLike = { addFields(fields: object[]): void; parseRow(values: (string | null)[]): Record<string, unknown> };
const newResult = () => new (pg as unknown as { Result: new () => ResultLike }).Result();

describe('row templates', () => {
  it('give the same rows as node-postgres, a column named __proto__ included', () => {
    useFastRowTemplates();
    const result = newResult();
    result.addFields([
      { name: 'id', dataTypeID: 23, format: 'text' },
      { name: 'name', dataTypeID: 25, format: 'text' },
      { name: 'admin', dataTypeID: 16, format: 'text' },
    ]);
    const row = result.parseRow(['7', null, 't']);
    expect(row).toEqual({ id: 7, name: null, admin: true });
    expect(Object.keys(row)).toEqual(['id', 'name', 'admin']);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);

    const odd = newResult();
    odd.addFields([{ name: '__proto__', dataTypeID: 25, format: 'text' }]);
    const oddRow = odd.parseRow(['x']);
    expect(Object.getOwnPropertyDescriptor(oddRow, '__proto__')?.value).toBe('x');
    expect(Object.getPrototypeOf(oddRow)).toBe(Object.prototype);
  });
});

describe('timestamps', () => {
  it("parse to the millisecond in UTC, and keep pg's parser for every other form", () => {
    useFastTimestamps();
    const parse = pg.types.getTypeParser(1184, 'text') as (value: string) => Date | number;
    const pad = (n: number, width = 2) => String(n).padStart(width, '0');
    fc.assert(
      fc.property(
        fc.record({ ms: fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31, 23, 59, 59) }), micros: fc.integer({ min: 0, max: 999_999 }), digits: fc.integer({ min: 0, max: 6 }) }),
        ({ ms, micros, digits }) => {
          const d = new Date(Math.floor(ms / 1000) * 1000);
          const fraction = pad(micros, 6).slice(0, digits);
          const value = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${digits ? `.${fraction}` : ''}+00`;
          const millis = digits ? Math.floor(Number(`0.${fraction}`) * 1000 + 1e-9) : 0;
          expect((parse(value) as Date).getTime()).toBe(d.getTime() + millis);
        },
      ),
    );
    expect((parse('2026-11-23 16:11:45.5+02') as Date).toISOString()).toBe('2026-11-23T14:11:45.500Z');
    expect((parse('2026-11-23 14:11:45+05:30') as Date).toISOString()).toBe('2026-11-23T08:41:45.000Z');
    expect((parse('0044-03-15 12:00:00+00 BC') as Date).toISOString()).toBe('-000043-03-15T12:00:00.000Z');
    expect(parse('infinity')).toBe(Infinity);
  });
});

describe('statement names', () => {
  it('names a statement with parameters on its second use, and only then', () => {
    const names = new StatementNames();
    expect(names.nameOf('select $1')).toBeUndefined();
    const name = names.nameOf('select $1');
    expect(name).toMatch(/^forgelog_\d+$/);
    expect(names.nameOf('select $1')).toBe(name);
    names.forget('select $1');
    expect(names.nameOf('select $1')).toBeUndefined();
    expect(names.nameOf('select $1')).not.toBe(name);
  });
});

describeOnPostgres('named statements on PostgreSQL', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase({ poolSize: 1 });
    await sql`create table named_probe (id integer primary key, label text)`.execute(handle.db);
    await sql`insert into named_probe values (1, 'one')`.execute(handle.db);
  });
  afterAll(() => handle.close());

  const probe = (db = handle.db) => db.selectFrom('named_probe' as never).selectAll().where('id' as never, '=', 1 as never).execute();

  it('are prepared once per connection and survive a column added by another process', async () => {
    for (let i = 0; i < 3; i++) expect(await probe()).toEqual([{ id: 1, label: 'one' }]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like '%named_probe%'`.execute(handle.db);
    expect(rows[0]!.n).toBe(1);

    // Another process migrates: the prepared `select *` now has a stale result type.
    const other = new pg.Client({ connectionString: (handle.pool!.options as { connectionString: string }).connectionString });
    await other.connect();
    await other.query('alter table named_probe add column extra integer default 42');
    await other.end();

    // Outside a transaction the statement is prepared afresh and the query answers.
    expect(await probe()).toEqual([{ id: 1, label: 'one', extra: 42 }]);
    // Inside one the error reaches the caller (the command handler retries on it) …
    await sql`alter table named_probe add column more integer default 7`.execute(handle.db);
    // Named again under a new name, on the transactions' connection (the pool's one; the reads outside transactions go to the pipeline's).
    for (let i = 0; i < 2; i++) await handle.db.transaction().execute((trx) => probe(trx));
    await sql`alter table named_probe drop column more`.execute(handle.db);
    const failure = await handle.db
      .transaction()
      .execute((trx) => probe(trx))
      .then(() => undefined, (error: unknown) => error);
    expect(isStalePreparedPlan(failure)).toBe(true);
    // … and the retry works.
    expect(await handle.db.transaction().execute((trx) => probe(trx))).toEqual([{ id: 1, label: 'one', extra: 42 }]);
  });

  it('are not used with FORGELOG_PREPARED_STATEMENTS=off', async () => {
    const url = (handle.pool!.options as { connectionString: string }).connectionString;
    process.env.FORGELOG_PREPARED_STATEMENTS = 'off';
    const unnamed = await openDatabase({ databaseUrl: url, poolSize: 1 }).finally(() => delete process.env.FORGELOG_PREPARED_STATEMENTS);
    try {
      for (let i = 0; i < 3; i++) expect(await probe(unnamed.db)).toHaveLength(1);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(unnamed.db);
      expect(rows[0]!.n).toBe(0);
    } finally {
      await unnamed.close();
    }
    process.env.FORGELOG_PREPARED_STATEMENTS = 'sometimes';
    await expect(openDatabase({ databaseUrl: url })).rejects.toThrow('FORGELOG_PREPARED_STATEMENTS must be on or off');
    delete process.env.FORGELOG_PREPARED_STATEMENTS;
  });
});

describeOnPostgres('a transaction in one round trip', () => {
  let handle: DatabaseHandle;
  let pool: pg.Pool;
  const names = new StatementNames();
  beforeAll(async () => {
    handle = await openTestDatabase({ poolSize: 1 });
    const url = (handle.pool!.options as { connectionString: string }).connectionString;
    // One connection, so that every batch meets the statements the previous ones prepared.
    pool = new pg.Pool({ connectionString: url, max: 1 });
    names.attach(pool);
    await pool.query('create table batch_probe (id integer primary key, label text not null)');
  });
  afterAll(async () => {
    await pool.end();
    await handle.close();
  });

  const insert = (id: number, label: string) => ({ sql: 'insert into batch_probe (id, label) values ($1, $2) returning id, label', parameters: [id, label] });
  const relabel = (id: number, label: string) => ({ sql: 'update batch_probe set label = $2 where id = $1', parameters: [id, label] });
  const countUpTo = (id: number) => ({ sql: 'select count(*)::int as n from batch_probe where id <= $1', parameters: [id] });
  const rows = async () => (await pool.query('select id, label from batch_probe order by id')).rows;

  it("gives each statement's result, by name from a statement's second use on", async () => {
    for (let id = 1; id <= 3; id++) {
      const results = await transactionInOneRoundTrip(pool, [insert(id, `new ${id}`), relabel(id, `label ${id}`), countUpTo(id)], names);
      expect(results.map((r) => [r.command, r.rowCount])).toEqual([['INSERT', 1], ['UPDATE', 1], ['SELECT', 1]]);
      expect(results[0]!.rows).toEqual([{ id, label: `new ${id}` }]);
      expect(results[2]!.rows).toEqual([{ n: id }]);
    }
    const prepared = await pool.query<{ statement: string }>('select statement from pg_prepared_statements');
    expect(prepared.rows.map((r) => r.statement).sort()).toEqual([countUpTo(0).sql, insert(0, '').sql, relabel(0, '').sql].sort());
    expect(await rows()).toEqual([1, 2, 3].map((id) => ({ id, label: `label ${id}` })));
  });

  it('commits nothing when a statement fails, says which, and leaves the connection usable', async () => {
    const later = { sql: 'select label from batch_probe where id = $1 and label <> $2', parameters: [1, 'x'] };
    await transactionInOneRoundTrip(pool, [later], names); // seen once: its next use gets a name
    const failure = await transactionInOneRoundTrip(pool, [relabel(2, 'changed'), insert(1, 'duplicate'), later], names).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: '23505', statementIndex: 1 });
    expect(await rows()).toEqual([1, 2, 3].map((id) => ({ id, label: `label ${id}` })));
    expect((await pool.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    // `later` was skipped before the server prepared it: its name is prepared now, on first use.
    const [result] = await transactionInOneRoundTrip(pool, [later], names);
    expect(result!.rows).toEqual([{ label: 'label 1' }]);
  });
});

describe('reads together', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase();
  });
  afterAll(() => handle.close());

  it('answer each read as it answers alone, in one round trip on PostgreSQL; in a transaction, on its connection', async () => {
    const { db } = handle;
    const queries = [
      sql<{ n: number; at: Date }>`select g as n, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 day' as at from generate_series(1, 3) g`.compile(db),
      db.selectFrom('events').select(sql<string>`count(*)`.as('n')).compile(),
      sql<{ none: number }>`select 1 as none where false`.compile(db),
    ] as const;
    const alone = await Promise.all(queries.map(async (q) => (await db.executeQuery(q)).rows));
    let together: unknown;
    const trips = await roundTrips(handle, async () => (together = await readTogether(db, queries)));
    expect(together).toEqual(alone);
    expect(alone[0]).toEqual([1, 2, 3].map((n) => ({ n, at: new Date(Date.UTC(2026, 0, 1 + n)) })));
    if (handle.pool) expect(trips).toEqual([queries.map((q) => q.sql)]);
    // A temporary table is its connection's alone: read from the transaction's, it is there.
    await db.transaction().execute(async (trx) => {
      await sql`create temporary table read_together_probe (n integer) on commit drop`.execute(trx);
      await sql`insert into read_together_probe values (7)`.execute(trx);
      const [rows, one] = await readTogether(trx, [sql<{ n: number }>`select n from read_together_probe`.compile(trx), sql<{ x: number }>`select 1 as x`.compile(trx)] as const);
      expect(rows).toEqual([{ n: 7 }]);
      expect(one).toEqual([{ x: 1 }]);
    });
  });
});

describe("a transaction's round trips", () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    // One connection, so that what a transaction leaves on it meets the next one.
    handle = await openTestDatabase({ poolSize: 1 });
    await sql`create table trip_probe (id integer primary key, label text not null check (label <> 'refused'))`.execute(handle.db);
    // A unique key checked at the commit: a COMMIT that fails.
    await sql`create table trip_deferred (id integer, constraint trip_deferred_unique unique (id) deferrable initially deferred)`.execute(handle.db);
  });
  afterAll(() => handle.close());

  /**
   * The round trips the pool's connection makes while `fn` runs: each Sync of the extended
   * protocol and each simple query (BEGIN and COMMIT go as one) is one.
   */
  async function syncsDuring(fn: () => Promise<unknown>): Promise<number> {
    if (!handle.pool) {
      await fn();
      return 0;
    }
    const client = await handle.pool.connect();
    const connection = (client as unknown as { connection: { sync(): void; query(text: string): void } }).connection;
    const sync = connection.sync.bind(connection);
    const simple = connection.query.bind(connection);
    let trips = 0;
    connection.sync = () => (trips++, sync());
    connection.query = (text: string) => (trips++, simple(text));
    client.release();
    try {
      await fn();
    } finally {
      connection.sync = sync;
      connection.query = simple;
    }
    return trips;
  }
  const insert = (db: Db, id: number, label: string) => db.insertInto('trip_probe' as never).values({ id, label } as never).compile();
  const labels = async () => (await sql<{ id: number; label: string }>`select id, label from trip_probe order by id`.execute(handle.db)).rows;
  const status = async () => {
    const client = await handle.pool?.connect();
    client?.release();
    return client?.getTransactionStatus();
  };

  it('sends BEGIN with the first statement, and nothing for a transaction that sends nothing', async () => {
    const trips = await syncsDuring(() =>
      handle.db.transaction().execute(async (trx) => {
        await trx.executeQuery(insert(trx, 1, 'one'));
        await trx.executeQuery(insert(trx, 2, 'two'));
      }),
    );
    if (handle.pool) expect(trips).toBe(3); // BEGIN and the first insert, the second, COMMIT
    expect(await labels()).toEqual([
      { id: 1, label: 'one' },
      { id: 2, label: 'two' },
    ]);
    expect(await syncsDuring(() => handle.db.transaction().execute(async () => {}))).toBe(0);
    expect(await status()).toBe(handle.pool ? 'I' : undefined);
  });

  it('rolls back the statements before a failed one, the first one sent with BEGIN included', async () => {
    const failing = handle.db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(trx, 3, 'three'));
      await trx.executeQuery(insert(trx, 4, 'refused'));
    });
    await expect(failing).rejects.toMatchObject({ code: '23514' });
    await expect(failing.catch((error: { statementIndex?: number }) => error.statementIndex)).resolves.toBeUndefined();
    const first = handle.db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(trx, 5, 'refused'));
    });
    await expect(first).rejects.toMatchObject({ code: '23514' });
    expect((await labels()).map((row) => row.id)).toEqual([1, 2]);
    expect(await status()).toBe(handle.pool ? 'I' : undefined);
  });

  it('commits with a batch that ends with the COMMIT, and answers the COMMIT kysely sends after it without a round trip', async () => {
    const trips = await syncsDuring(() =>
      handle.db.transaction().execute(async (trx) => {
        await trx.executeQuery(insert(trx, 6, 'six'));
        const results = await batchInTransaction(trx, [insert(trx, 7, 'seven'), sql`select count(*)::int as n from trip_probe`.compile(trx)], { commit: true });
        expect(results.map((r) => r.rows)).toEqual([[], [{ n: 4 }]]);
      }),
    );
    if (handle.pool) expect(trips).toBe(2);
    expect((await labels()).map((row) => row.id)).toEqual([1, 2, 6, 7]);
    expect(await status()).toBe(handle.pool ? 'I' : undefined);
  });

  it('commits nothing when a statement of the batch fails, and the transaction is rolled back as usual', async () => {
    const failing = handle.db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(trx, 8, 'eight'));
      await batchInTransaction(trx, [insert(trx, 9, 'nine'), insert(trx, 10, 'refused')], { commit: true });
    });
    await expect(failing).rejects.toMatchObject({ code: '23514', statementIndex: 1 });
    expect((await labels()).map((row) => row.id)).toEqual([1, 2, 6, 7]);
    expect(await status()).toBe(handle.pool ? 'I' : undefined);
    // The connection goes on: a transaction after it commits.
    await handle.db.transaction().execute(async (trx) => void (await trx.executeQuery(insert(trx, 11, 'eleven'))));
    expect((await labels()).map((row) => row.id)).toEqual([1, 2, 6, 7, 11]);
  });

  it('has rolled back when the COMMIT of the batch fails, and the connection goes on', async () => {
    const twice = sql`insert into trip_deferred (id) values (1), (1)`;
    const failing = handle.db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(trx, 12, 'twelve'));
      await batchInTransaction(trx, [twice.compile(trx)], { commit: true });
    });
    await expect(failing).rejects.toMatchObject({ code: '23505', statementIndex: 1 });
    expect((await labels()).map((row) => row.id)).toEqual([1, 2, 6, 7, 11]);
    expect((await sql`select * from trip_deferred`.execute(handle.db)).rows).toEqual([]);
    expect(await status()).toBe(handle.pool ? 'I' : undefined);
    await handle.db.transaction().execute(async (trx) => void (await trx.executeQuery(insert(trx, 13, 'thirteen'))));
    expect((await labels()).map((row) => row.id)).toEqual([1, 2, 6, 7, 11, 13]);
  });
});
