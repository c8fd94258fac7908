import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, type CompiledQuery, type QueryResult } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import { lockDataDir } from './embedded-lock.js';
import { copyTemplateInto, isInitialised } from './embedded-template.js';
import { readsTogetherOn } from './read-together.js';
import { Pipeline, pipelinedPool } from './pipeline.js';
import { attachTransactionBatches, StatementNames, transactionInOneRoundTrip, useFastRowTemplates, useFastTimestamps } from './pg-client.js';

/**
 * Every table, as Kysely types them. Empty here: the code that owns tables adds them where it
 * declares them, by declaration merging (`declare module '…/database/database.js' { interface
 * Database extends EnvironmentsReadTables {} }`) — the event store its tables, each projection
 * its read tables — so the database layer knows no table above it and no list is kept by hand.
 */
export interface Database {}
export type Db = Kysely<Database>;
export type OneRoundTrip = (statements: readonly CompiledQuery[]) => Promise<QueryResult<unknown>[]>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** The pool (PostgreSQL) the requests and the workers' batches share. */
  pool?: pg.Pool;
  /**
   * Connections held for a whole session (PostgreSQL): the notifier's LISTEN, the workers'
   * advisory locks. Apart from `pool`, so they never take the connections requests wait for.
   */
  sessions?: pg.Pool;
  /** Where `db` sends the plain reads it runs outside a transaction (PostgreSQL; src/database/pipeline.ts). */
  pipeline?: Pipeline;
  pglite?: PGlite;
  /** Statements as one transaction in one round trip (PostgreSQL; see StatementBatch). */
  oneRoundTrip?: OneRoundTrip;
  close(): Promise<void>;
}

const INT8 = 20;
const DATE = 1082;
const XID8 = 5069;
const asString = (value: string) => value;

// int8 as strings on both backends (PGlite would give numbers or BigInt), dates as 'YYYY-MM-DD'.
pg.types.setTypeParser(INT8, asString);
pg.types.setTypeParser(DATE, asString);
pg.types.setTypeParser(XID8 as 20, asString); // xid8 is not in pg-types' list of ids
useFastRowTemplates();
useFastTimestamps();

/**
 * FORGELOG_PREPARED_STATEMENTS=off sends every statement unnamed, for a connection pooler
 * that hands one client's statements to several server connections (PgBouncer in
 * transaction mode before 1.21), where a named statement would not be found.
 */
function preparedStatements(): boolean {
  const value = process.env.FORGELOG_PREPARED_STATEMENTS ?? 'on';
  if (value !== 'on' && value !== 'off') throw new Error(`FORGELOG_PREPARED_STATEMENTS must be on or off, got ${value}`);
  return value === 'on';
}

/**
 * PGlite's own start parameters plus smaller shared buffers: 16 MB instead of 128 MB, which
 * PostgreSQL touches and WASM memory never gives back (idle RSS of `forgelog serve`; see
 * bench/memory.ts). Pages past them are read from the files, which the OS caches.
 */
const EMBEDDED_START_PARAMS = [...(PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams, '-c', 'shared_buffers=16MB'];

/**
 * FORGELOG_PIPELINE=off sends each statement outside a transaction on a pooled connection of
 * its own, as before the pipeline (src/database/pipeline.ts), for a proxy between forgelog and
 * PostgreSQL that does not pass the extended protocol's pipelining through.
 */
function pipelinedStatements(): boolean {
  const value = process.env.FORGELOG_PIPELINE ?? 'on';
  if (value !== 'on' && value !== 'off') throw new Error(`FORGELOG_PIPELINE must be on or off, got ${value}`);
  return value === 'on';
}

/** The pipeline's connections, beside the pool's: enough that one slow statement holds up few others. */
const PIPELINE_CONNECTIONS = 4;

/** The notifier's LISTEN and a few workers' lock connections (tests run several workers in one process). */
const SESSION_CONNECTIONS = 8;

export async function openDatabase(options: { databaseUrl?: string | undefined; dataDir?: string; poolSize?: number }): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const settings = {
      connectionString: options.databaseUrl,
      // Connections stay open: an idle timeout re-arms a timer on every checkout and release.
      idleTimeoutMillis: 0,
      // An unreachable host (or a pool that stays exhausted) fails a checkout after 10 s
      // instead of holding the request forever; the request answers 503.
      connectionTimeoutMillis: 10_000,
      // Session settings sent at connection start: a forgotten open transaction holds back
      // every gap-free reader (DESIGN.md); JIT compiles misestimated list queries for
      // hundreds of milliseconds to return a page of 20 rows (bench: 364 ms → 41 ms).
      options: '-c idle_in_transaction_session_timeout=60000 -c jit=off',
    };
    const pool = new pg.Pool({ ...settings, max: options.poolSize ?? 10 });
    const sessions = new pg.Pool({ ...settings, max: SESSION_CONNECTIONS });
    sessions.on('error', () => {});
    sessions.on('connect', (client) => client.on('error', () => {}));
    // A connection that drops (pg_terminate_backend, a restart, a network fault) emits
    // 'error' on its client. The pool listens on idle clients and then emits on itself; a
    // checked-out client had no listener, and an unheard 'error' ends the process. The
    // query in flight on it fails on its own (isConnectionError → 503, workers retry) and
    // the pool drops the broken client on release and connects afresh on demand.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const names = preparedStatements() ? new StatementNames() : undefined;
    names?.attach(pool);
    attachTransactionBatches(pool, names);
    const pipeline = pipelinedStatements() ? new Pipeline(settings, PIPELINE_CONNECTIONS, names) : undefined;
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pipeline ? pipelinedPool(pool, pipeline) : pool }) });
    const oneRoundTrip: OneRoundTrip = (statements) => transactionInOneRoundTrip(pool, statements, names);
    readsTogetherOn(db, pipeline ? (statements) => pipeline.batch(statements) : oneRoundTrip);
    return {
      db,
      kind: 'postgres',
      pool,
      sessions,
      ...(pipeline ? { pipeline } : {}),
      oneRoundTrip,
      close: async () => {
        try {
          await db.destroy();
        } finally {
          await sessions.end();
        }
      },
    };
  }
  const dataDir = options.dataDir ?? './data';
  const parsers = { [INT8]: asString, [DATE]: asString, [XID8]: asString };
  if (dataDir === 'memory://') {
    const pglite = await PGlite.create({ parsers, startParams: EMBEDDED_START_PARAMS });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
    return { db, kind: 'pglite', pglite, close: () => db.destroy() };
  }
  // One process per data directory (src/database/embedded-lock.ts); a new one starts from the template.
  const unlock = lockDataDir(dataDir);
  try {
    if (!isInitialised(dataDir)) await copyTemplateInto(dataDir);
    const pglite = await PGlite.create(dataDir, { parsers, startParams: EMBEDDED_START_PARAMS });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
    return {
      db,
      kind: 'pglite',
      pglite,
      close: async () => {
        try {
          await db.destroy();
        } finally {
          unlock();
        }
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}
