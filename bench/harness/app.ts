/** The app under test, as `forgelog serve` runs it, and a bare pool beside it for the bare routes. */
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/database/database.js';
import { createApp } from '../../src/http/app.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { countStatements, log, type StatementCounter } from './meters.js';
import { closeServer, listenLocal, type Traffic } from './scenarios.js';
import { once, type Cleanups } from './setup.js';
import { POOL_SIZE, WORKERS } from './settings.js';

export interface BenchApp {
  handle: DatabaseHandle;
  runtime: Runtime;
  /** The app's pool's statements and rollbacks. */
  statements: StatementCounter;
  poolSize: number;
  rootToken: string;
  base: string;
  traffic: Traffic;
  /** A pool of the app's size on the same database, for the bare routes. */
  barePool: pg.Pool;
  /** Stops serving, then closes the runtime (its workers, its pool). */
  close(): Promise<void>;
  closeBare(): Promise<void>;
}

/**
 * The app on its own pool (sized like openRuntime's default) with a statement counter;
 * openRuntime's defaults otherwise (migrations, bootstrap, in-process workers, like
 * `forgelog serve`). Everything it opens is closed once, by `close`/`closeBare` or by the
 * cleanups it pushes.
 */
export async function startApp(url: string, cleanups: Cleanups, rootToken = `bench-root-${process.pid}-${Date.now().toString(36)}`): Promise<BenchApp> {
  const handle = await openDatabase({ databaseUrl: url, ...(POOL_SIZE ? { poolSize: POOL_SIZE } : {}) });
  const statements = countStatements(handle.pool!);
  const poolSize = handle.pool!.options.max ?? 10;
  const config: Config = { ...loadConfig({}), port: 0, databaseUrl: url, logLevel: 'silent', rootToken };
  const runtime = await openRuntime(config, { handle, logger: pino({ level: 'silent' }), workers: WORKERS });
  const closeRuntime = once(() => runtime.close());
  cleanups.push(closeRuntime);
  // listen() binds 0.0.0.0; the bench stays on loopback with the same app (createApp is what listen serves).
  const { server, port, traffic } = await listenLocal(createApp(runtime.app).fetch);
  const closeHttp = once(() => closeServer(server));
  cleanups.push(closeHttp);
  const base = `http://127.0.0.1:${port}`;
  (runtime.config as { externalUrl: string }).externalUrl = base;

  const barePool = new pg.Pool({ connectionString: url, max: poolSize });
  barePool.on('error', () => {}); // idle clients die when the database is dropped
  const closeBare = once(async () => {
    if (barePool.totalCount > barePool.idleCount) log(`bare pool: ${barePool.totalCount - barePool.idleCount} clients still checked out at the end`);
    await barePool.end();
  });
  cleanups.push(closeBare);
  const close = once(async () => {
    await closeHttp();
    await closeRuntime();
  });
  return { handle, runtime, statements, poolSize, rootToken, base, traffic, barePool, close, closeBare };
}
