import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import { holdUntilCommitted } from './after-commit.js';
import type { Database, Db } from './database.js';

/**
 * One database transaction around work that opens transactions of its own (a request whose
 * commands each run `db.transaction()`): `fn` gets a `Db` on the transaction's connection
 * whose `transaction()` is a savepoint — its commit a `release savepoint`, its rollback a
 * `rollback to savepoint` — so a command's retry after a conflict still starts afresh, and
 * everything `fn` does commits at once when it returns, or not at all when it throws.
 *
 * What it costs the work inside: its transaction id is the outer one's from its first write,
 * so a retry cannot take a younger one (a stream whose head a younger transaction wrote stays
 * refused: the kernel's retries end in `409 Resource lock`); a statement that fails outside a
 * savepoint aborts the whole transaction. The connection is this work's alone until the end
 * (on the embedded database: the database is), so `fn` must reach the database only through
 * the `Db` it is given.
 */
export async function inOneTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await connection.executeQuery(CompiledQuery.raw('begin'));
    const nested = new Kysely<Database>({ dialect: new SavepointDialect(connection) });
    const committed = holdUntilCommitted(nested, db);
    let result: T;
    try {
      result = await fn(nested);
    } catch (error) {
      // A lost connection fails the rollback too: the transaction is gone either way.
      await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => {});
      throw error;
    }
    await connection.executeQuery(CompiledQuery.raw('commit'));
    committed();
    return result;
  });
}

class SavepointDialect implements Dialect {
  constructor(private readonly outer: Kysely<Database>) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new SavepointDriver(this.outer);
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

/**
 * Every query on the outer transaction's connection; transactions as savepoints, one at a
 * time: a second `transaction()` started while one runs waits for it, so two savepoints'
 * statements never interleave on the one connection.
 */
class SavepointDriver implements Driver {
  private readonly connection: DatabaseConnection;
  private depth = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly releases: (() => void)[] = [];

  constructor(outer: Kysely<Database>) {
    this.connection = {
      executeQuery: <R>(compiled: CompiledQuery) => outer.executeQuery(compiled) as Promise<QueryResult<R>>,
      // eslint-disable-next-line require-yield
      async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
        throw new Error('a savepoint connection does not stream query results');
      },
    };
  }
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async releaseConnection() {}
  async beginTransaction(connection: DatabaseConnection) {
    const previous = this.queue;
    this.queue = new Promise<void>((resolve) => this.releases.push(resolve));
    await previous;
    await connection.executeQuery(CompiledQuery.raw(`savepoint nested_${++this.depth}`));
  }
  async commitTransaction(connection: DatabaseConnection) {
    try {
      await connection.executeQuery(CompiledQuery.raw(`release savepoint nested_${this.depth}`));
    } finally {
      this.end();
    }
  }
  async rollbackTransaction(connection: DatabaseConnection) {
    try {
      await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint nested_${this.depth}`));
      await connection.executeQuery(CompiledQuery.raw(`release savepoint nested_${this.depth}`));
    } finally {
      this.end();
    }
  }
  async destroy() {}

  private end() {
    this.depth -= 1;
    this.releases.shift()?.();
  }
}
