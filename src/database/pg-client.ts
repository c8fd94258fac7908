import pg from 'pg';

/**
 * How forgelog drives node-postgres, tuned by `npm run bench`: repeated statements by name,
 * rows built from a template V8 can copy quickly, and UTC timestamps parsed by V8's own
 * ISO 8601 parser.
 */

/**
 * Server-side prepared statements for the SQL the app sends again and again. A statement
 * that carries parameters gets a name on its second use; PostgreSQL then parses and plans
 * it once per connection instead of on every call. That halves the database's CPU per
 * write (pgbench of PUT /user/status's statements: 2,085 → 3,767 transactions/s) and frees
 * the cores Node shares with it. Kysely still builds the SQL; only the wire protocol changes.
 *
 * Bounded (README: Memory): at most MAX_NAMED names are ever given per process, so no
 * connection holds more prepared statements than that (texts past it — IN-lists of every
 * length — stay unnamed; evicting a name would mean closing it on every connection), and the
 * texts seen once are forgotten in bulk past MAX_SEEN.
 */
export const MAX_NAMED = 2_000;
export const MAX_SEEN = 10_000;

/**
 * PostgreSQL refuses to run a prepared `select *` whose table gained a column since it was
 * planned (a migration run by another process): "cached plan must not change result type".
 */
export function isStalePreparedPlan(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | undefined;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/**
 * Whether an error says the database cannot be reached now rather than that a statement
 * failed: the connection was refused, dropped or timed out, or the server is shutting down
 * or starting up. The one classification of connection errors: the HTTP layer answers them
 * with 503 and the workers retry them. Such a statement may or may not have committed, so
 * nothing retries it blindly: only an answered commit is acknowledged.
 */
export function isConnectionError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  // SQLSTATE class 08 (connection exception), 57P01–57P03 (admin/crash shutdown, cannot
  // connect now), 53300 (too many connections), and the socket errors of node:net.
  if (/^08[0-9A-Z]{3}$/.test(code) || CONNECTION_CODES.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (CONNECTION_MESSAGES.test(message)) return true;
  // node:net reports a refused dual-stack connect as an AggregateError of both attempts.
  if (Array.isArray(e.errors) && e.errors.some((inner) => isConnectionError(inner, depth + 1))) return true;
  return isConnectionError(e.cause, depth + 1);
}

const CONNECTION_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** node-postgres and pg-pool say these in words only. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Cannot use a pool after calling end on the pool)/;

export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly seen = new Set<string>();
  private counter = 0;

  /** Names given so far: each connection prepares at most these. */
  get named(): number {
    return this.counter;
  }

  get seenOnce(): number {
    return this.seen.size;
  }

  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.counter >= MAX_NAMED) return name;
    if (!this.seen.has(text)) {
      if (this.seen.size >= MAX_SEEN) this.seen.clear();
      this.seen.add(text);
      return undefined;
    }
    this.seen.delete(text);
    const named = `forgelog_${++this.counter}`;
    this.names.set(text, named);
    return named;
  }

  /** Forgets a text's name: its next uses prepare it afresh under a new one. */
  forget(text: string): void {
    this.names.delete(text);
  }

  /**
   * Makes a pool's clients send repeated statements by name. A statement whose plan went
   * stale is renamed; outside a transaction it is retried at once, inside one the error
   * reaches the command handler, which retries the whole transaction.
   */
  attach(pool: pg.Pool): void {
    pool.on('connect', (client) => this.wrap(client));
  }

  /** attach's work on one client (a pool's, or a pipeline's: src/database/pipeline.ts). */
  wrap(client: pg.ClientBase): void {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>;
    client.query = ((config: unknown, values?: unknown, callback?: unknown) => {
      if (typeof config !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined) {
        return query(config, values, callback);
      }
      const name = this.nameOf(config);
      if (name === undefined) return query(config, values);
      const idle = client.getTransactionStatus() === 'I';
      return namedQuery(query, name, config, values).catch((error: unknown) => {
        if (!isStalePreparedPlan(error)) throw error;
        this.forget(config);
        if (!idle) throw error;
        return query(config, values);
      });
    }) as typeof client.query;
  }
}

/**
 * Sends a named statement. A query config object would be copied property by property by
 * pg (`cloneQueryConfig`, ~4% of an authenticated GET); a Query built from the text is not.
 */
function namedQuery(query: (config: unknown) => unknown, name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const submittable = new (pg.Query as unknown as new (text: string, values: unknown[], callback: (error: Error | null, result: pg.QueryResult) => void) => pg.Query)(
      text,
      values,
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    (submittable as { name?: string }).name = name;
    query(submittable);
  });
}

/**
 * node-postgres builds each result's row template as an `Object.create(null)` dictionary
 * and spreads it once per result: ~19 µs per query for the ~45 columns of a user row with
 * its token, paid by every authenticated request. A template with ordinary properties takes
 * ~2 µs. Rows are the same (each row is still a spread copy of the template); a column named
 * `__proto__`, which an assignment would turn into a prototype, keeps the original path.
 */
export function useFastRowTemplates(): void {
  const prototype = (pg as unknown as { Result: { prototype: ResultInternals } }).Result.prototype;
  if (prototype.addFields.name === 'addFieldsWithTemplate') return;
  const original = prototype.addFields;
  prototype.addFields = function addFieldsWithTemplate(this: ResultInternals, fields: FieldDescription[]) {
    if (fields.some((field) => field.name === '__proto__')) return original.call(this, fields);
    this.fields = fields;
    this._parsers = new Array(fields.length);
    const row: Record<string, null> = {};
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      row[field.name] = null;
      this._parsers[i] = (this._types ?? pg.types).getTypeParser(field.dataTypeID, (field.format || 'text') as 'text');
    }
    this._prebuiltEmptyResultObject = row;
  };
}

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}

/** The parts of pg's (undeclared) Result class the template touches. */
interface ResultInternals {
  fields: FieldDescription[];
  _parsers: unknown[] | undefined;
  _types: { getTypeParser(oid: number, format: 'text'): unknown } | undefined;
  _prebuiltEmptyResultObject: Record<string, null> | null;
  addFields(fields: FieldDescription[]): void;
}

const TIMESTAMPTZ = 1184;
/** PostgreSQL's output for a timestamptz in a UTC session: '2026-11-23 14:11:45.401123+00'. */
const UTC_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?\+00$/;

/**
 * timestamptz values of a UTC session go through `new Date(ISO 8601)`: a third of the cost
 * of pg's general parser (postgres-date), which keeps every other form (other zones, BC,
 * infinity). Both drop the microseconds a Date cannot hold.
 */
export function useFastTimestamps(): void {
  const general = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (value: string) => Date;
  if (general.name === 'parseUtcTimestamp') return;
  pg.types.setTypeParser(TIMESTAMPTZ, 'text', function parseUtcTimestamp(value: string) {
    return UTC_TIMESTAMP.test(value) ? new Date(`${value.slice(0, 10)}T${value.slice(11, -3)}Z`) : general(value);
  });
}

/** A statement of a batch: SQL with `$n` parameters and their values. */
export interface BatchStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

type Callback = (error: (Error & { statementIndex?: number }) | null, results: pg.QueryResult[]) => void;

/** The parts of pg's (undeclared) Connection and utils a batch writes with. */
interface WireConnection {
  stream: { cork(): void; uncork(): void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name: string | undefined; types: unknown[] }): void;
  bind(message: { statement: string | undefined; values: readonly unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
}
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils.prepareValue;
type PgResult = pg.QueryResult & { addFields(fields: unknown[]): void; parseRow(fields: unknown[]): unknown; addRow(row: unknown): void; addCommandComplete(message: unknown): void };
const PgResultClass = (pg as unknown as { Result: new (rowMode?: string, types?: unknown) => PgResult }).Result;

/**
 * Statements sent as one message batch of the extended protocol closed by a single Sync.
 * PostgreSQL runs them in order and at the first error skips everything up to the Sync;
 * outside an explicit transaction block they form one implicit transaction, committed at the
 * Sync if none failed and rolled back otherwise — a whole transaction in one round trip
 * instead of one per statement (transactionInOneRoundTrip).
 *
 * It is a pg "submittable": the client hands it the backend's messages in order. Repeated
 * statements go by name like single queries (StatementNames); the client records a name as
 * prepared on its ParseComplete by reading `name` and `text`, which here follow the
 * statement the backend is answering.
 */
export class StatementBatch {
  private cursor = 0;
  private readonly results: PgResult[] = [];
  private readonly names: (string | undefined)[];
  private connection: WireConnection | undefined;
  private onDone: Callback | undefined;

  constructor(
    private readonly statements: readonly BatchStatement[],
    callback: Callback,
    private readonly statementNames?: StatementNames,
  ) {
    this.onDone = callback;
    this.names = statements.map((s) => (statementNames && s.parameters.length > 0 ? statementNames.nameOf(s.sql) : undefined));
  }

  get name(): string | undefined {
    return this.names[this.cursor];
  }

  get text(): string | undefined {
    return this.statements[this.cursor]?.sql;
  }

  submit(connection: WireConnection): null {
    this.connection = connection;
    connection.stream.cork();
    try {
      this.statements.forEach((statement, i) => {
        const name = this.names[i];
        if (!name || !(connection.parsedStatements[name] ?? connection.submittedNamedStatements[name])) {
          connection.parse({ text: statement.sql, name, types: [] });
          if (name) connection.submittedNamedStatements[name] = statement.sql;
        }
        connection.bind({ statement: name, values: statement.parameters, valueMapper: prepareValue });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      });
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return null;
  }

  private current(): PgResult {
    return (this.results[this.cursor] ??= new PgResultClass());
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    this.current().addFields(message.fields);
  }

  handleDataRow(message: { fields: unknown[] }): void {
    const result = this.current();
    result.addRow(result.parseRow(message.fields));
  }

  handleCommandComplete(message: unknown): void {
    this.current().addCommandComplete(message);
    this.cursor++;
  }

  handleEmptyQuery(): void {
    this.current();
    this.cursor++;
  }

  handleError(error: Error & { statementIndex?: number }): void {
    // The statements after the failed one were skipped unparsed: their names are not prepared.
    this.names.forEach((name, i) => {
      if (name && i > this.cursor) delete this.connection?.submittedNamedStatements[name];
    });
    const failed = this.statements[this.cursor];
    if (failed && isStalePreparedPlan(error)) this.statementNames?.forget(failed.sql);
    error.statementIndex = this.cursor;
    this.finish(error, []);
  }

  handleReadyForQuery(): void {
    this.finish(null, this.statements.map((_, i) => this.results[i] ?? new PgResultClass()));
  }

  private finish(error: Error | null, results: pg.QueryResult[]): void {
    const done = this.onDone;
    this.onDone = undefined;
    done?.(error, results);
  }

  handlePortalSuspended(): void {
    this.unexpected('portalSuspended');
  }

  handleCopyInResponse(): void {
    this.unexpected('copyInResponse');
  }

  handleCopyData(): void {
    this.unexpected('copyData');
  }

  private unexpected(message: string): void {
    this.finish(new Error(`a statement batch got an unexpected ${message} from the backend`), []);
  }
}

/**
 * Runs statements as one transaction in one round trip and returns each statement's result.
 * No BEGIN or COMMIT: the statements of a batch before its Sync form an implicit transaction,
 * which the Sync commits, or rolls back after an error (the protocol's "Extended Query"
 * rules), and the connection is then idle again. On an error nothing of the batch is
 * committed and the error carries `statementIndex`, the failed statement's place (the
 * length of `statements` for a failed commit).
 */
export async function transactionInOneRoundTrip(pool: pg.Pool, statements: readonly BatchStatement[], names?: StatementNames): Promise<pg.QueryResult[]> {
  const client = await pool.connect();
  // Inside a transaction block left open the Sync would commit nothing: such a client is dropped.
  if (client.getTransactionStatus() !== 'I') {
    const error = new Error('a pooled connection was left inside a transaction');
    client.release(error);
    throw error;
  }
  try {
    return await new Promise<pg.QueryResult[]>((resolve, reject) => {
      const batch = new StatementBatch(statements, (error, results) => (error ? reject(error) : resolve(results)), names);
      client.query(batch as unknown as pg.QueryConfig);
    });
  } finally {
    client.release();
  }
}

/**
 * The text by which a transaction's connection is asked to run a StatementBatch
 * (batchInTransaction, src/database/read-together.ts): kysely hands a transaction's statements
 * to its pg client one by one, and this is how several reach it as one.
 */
export const IN_TRANSACTION_BATCH = '/* forgelog: a statement batch in the open transaction */';

/** The statement a batch ends with when it also ends its transaction (batchInTransaction's `commit`). */
export const COMMIT = 'commit';

/**
 * Makes a pool's clients run the statements sent with IN_TRANSACTION_BATCH as one
 * StatementBatch: one write, one round trip. Inside the open transaction block its Sync
 * commits nothing; an error fails the batch (with `statementIndex`) and leaves the
 * transaction to be rolled back. The result's rows are each statement's result. Attached
 * after StatementNames' wrapper, so that the batch's text is never given a name.
 *
 * Two more round trips of a transaction are saved on the way (each costs both processes a
 * wake-up, a write and a read; on this machine's virtualised kernel that is most of what a
 * short statement costs):
 * - kysely's BEGIN is answered at once and sent in one batch with the transaction's first
 *   statement (a COPY or a cursor is preceded by the BEGIN as usual; a transaction that sends
 *   nothing sends no BEGIN and no COMMIT);
 * - a batch may end with COMMIT. The transaction is then over when the batch answers
 *   (committed, or rolled back when the COMMIT failed), and the COMMIT or ROLLBACK kysely
 *   sends after it is answered here: the block it would end no longer exists.
 */
export function attachTransactionBatches(pool: pg.Pool, names?: StatementNames): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const batch = (statements: readonly BatchStatement[]) =>
      new Promise<pg.QueryResult[]>((resolve, reject) => {
        query(
          new StatementBatch(
            statements,
            (error, results) => {
              // Ended: committed, or rolled back by a COMMIT that failed; an earlier failure skipped the COMMIT.
              endedByBatch = statements.at(-1)?.sql === COMMIT && (!error || error.statementIndex === statements.length - 1);
              if (error) reject(error);
              else resolve(results);
            },
            names,
          ),
        );
      });
    let beginDeferred = false;
    let endedByBatch = false;
    client.query = ((config: unknown, values?: unknown, callback?: unknown) => {
      const ends = config === 'commit' || config === 'rollback';
      if (endedByBatch) {
        endedByBatch = false;
        if (ends) return Promise.resolve(answered(config));
      }
      if (config === 'begin' && callback === undefined && client.getTransactionStatus() === 'I') {
        beginDeferred = true;
        return Promise.resolve(answered('begin'));
      }
      const begin = beginDeferred;
      beginDeferred = false;
      if (config === IN_TRANSACTION_BATCH) {
        const [statements] = values as [readonly BatchStatement[]];
        if (!begin && client.getTransactionStatus() !== 'T') return Promise.reject(new Error('a statement batch is sent inside an open transaction only'));
        if (!begin) return batch(statements).then((results) => ({ command: 'BATCH', rowCount: results.length, rows: results }));
        return batch([BEGIN, ...statements]).then((results) => ({ command: 'BATCH', rowCount: statements.length, rows: results.slice(1) }), shifted);
      }
      if (!begin) return query(config, values, callback);
      if (ends) return Promise.resolve(answered(config));
      if (typeof config === 'string' && callback === undefined && (values === undefined || Array.isArray(values))) {
        return batch([BEGIN, { sql: config, parameters: (values as unknown[] | undefined) ?? [] }]).then(
          (results) => results[1]!,
          (error: Error & { statementIndex?: number }) => {
            delete error.statementIndex;
            throw error;
          },
        );
      }
      // A failed BEGIN fails the statement queued behind it too: that is the error reported.
      (query('begin') as Promise<unknown>).catch(() => {});
      return query(config, values, callback);
    }) as typeof client.query;
  });
}

const BEGIN: BatchStatement = { sql: 'begin', parameters: [] };

/** What a statement answered without being sent resolves to. */
const answered = (command: string): pg.QueryResult => ({ command: command.toUpperCase(), rowCount: null, rows: [], fields: [], oid: 0 }) as unknown as pg.QueryResult;

/** A batch's error with the deferred BEGIN left out of its `statementIndex`. */
function shifted(error: Error & { statementIndex?: number }): never {
  if (error.statementIndex !== undefined) error.statementIndex -= 1;
  throw error;
}
