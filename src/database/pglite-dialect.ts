import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { CopyIn } from './copy.js';
import { COMMIT, IN_TRANSACTION_BATCH } from './pg-client.js';

/**
 * A Kysely dialect over PGlite's single session. Every query or transaction takes the
 * session in turn (the npm dialects either leak queries into open transactions or pin an
 * old PGlite; see STACK.md). Consequence: inside a transaction, use `trx`, never `db`.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private queue: Promise<void> = Promise.resolve();
  private release: (() => void) | undefined;

  constructor(private readonly pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }
  async init() {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.release = release;
    return this.connection;
  }
  async releaseConnection() {
    const release = this.release;
    this.release = undefined;
    release?.();
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${isolation}`));
  }
  async commitTransaction(connection: DatabaseConnection) {
    if (!this.connection.takeEndedByBatch()) await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection) {
    if (!this.connection.takeEndedByBatch()) await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
  async destroy() {
    await this.queue;
    if (!this.pglite.closed) await this.pglite.close();
  }
}

class PGliteConnection implements DatabaseConnection {
  /** A batch ended the open transaction with its COMMIT (batchInTransaction): kysely's COMMIT or ROLLBACK is not sent. */
  private endedByBatch = false;

  constructor(private readonly pglite: PGlite) {}

  takeEndedByBatch(): boolean {
    const ended = this.endedByBatch;
    this.endedByBatch = false;
    return ended;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.sql === IN_TRANSACTION_BATCH) return (await this.batch(compiled.parameters[0] as readonly CompiledQuery[])) as QueryResult<R>;
    const copy: unknown = compiled.sql;
    if (copy instanceof CopyIn) {
      await this.pglite.query(copy.blobStatement, [], { blob: new Blob([copy.data]) });
      return { rows: [] };
    }
    const result = await this.pglite.query<R>(compiled.sql, compiled.parameters as unknown[]);
    const command = compiled.query?.kind;
    const mutates = command === 'InsertQueryNode' || command === 'UpdateQueryNode' || command === 'DeleteQueryNode';
    return {
      rows: result.rows,
      ...(mutates || result.affectedRows ? { numAffectedRows: BigInt(result.affectedRows ?? 0) } : {}),
    };
  }

  /** A statement batch (src/database/pg-client.ts) without a wire: the statements one after another, the first error with its `statementIndex`. */
  private async batch(statements: readonly CompiledQuery[]): Promise<QueryResult<QueryResult<unknown>>> {
    const results: QueryResult<unknown>[] = [];
    const endsTransaction = statements.at(-1)?.sql === COMMIT;
    for (const [i, statement] of statements.entries()) {
      try {
        results.push(await this.executeQuery(statement));
      } catch (error) {
        this.endedByBatch = endsTransaction && i === statements.length - 1;
        throw Object.assign(error as Error, { statementIndex: i });
      }
    }
    this.endedByBatch = endsTransaction;
    return { rows: results };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite dialect does not stream query results');
  }
}
