import { serve, type ServerType } from '@hono/node-server';
import { pino, type Logger } from 'pino';
import { bootstrap } from './bootstrap.js';
import { IdBlocks } from './commands/kernel/id-blocks.js';
import { StreamStateCache } from './commands/kernel/stream-cache.js';
import { StartupError, type Config } from './config.js';
import { holdSessionLock } from './database/advisory-lock.js';
import { openDatabase, type DatabaseHandle } from './database/database.js';
import { Notifier } from './eventstore/notifier.js';
import { createApp } from './http/app.js';
import type { AppContext } from './http/kernel/context.js';
import { migrateToLatest } from './database/migrate.js';
import { PROJECTORS, inlineProjectors } from './projections/registry.js';
import { usersProjector } from './projections/users.js';
import { ProjectionWorker } from './worker/runner.js';
import { runSealWorker } from './eventstore/seal.js';
import { publishTreeHead } from './eventstore/tree-heads.js';
import { REACTORS } from './commands/reactors.js';
import { DELIVERIES_SIGNAL } from './commands/integration-deliveries.js';
import { runDeliverySender } from './commands/integration-delivery-sender.js';
import { eventCoverageProblems, installEventTypes } from './commands/kernel/aggregates.js';
import { CredentialCache, KEEPS_CREDENTIALS } from './http/kernel/credentials.js';
import { isConnectionError } from './database/pg-client.js';
import { GeoReplicator } from './geo/replicator.js';
import { AsOfViews } from './projections/as-of.js';
import type { CommandContext } from './commands/kernel/context.js';

/** A running forgelog: database, command path and (optionally) the HTTP server. */
export interface Runtime {
  readonly config: Config;
  readonly handle: DatabaseHandle;
  readonly app: AppContext;
  readonly logger: Logger;
  readonly notifier: Notifier;
  /** The root token, when bootstrap created root in this start. */
  readonly bootstrapToken: string | undefined;
  /** The in-process async projections and reactors, when started. */
  readonly worker: ProjectionWorker | undefined;
  /** A Geo secondary's follower of its primary's log (config.geo.secondary). */
  readonly replicator: GeoReplicator | undefined;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  handle?: DatabaseHandle;
  logger?: Logger;
  migrate?: boolean;
  now?: () => Date;
  /** Run the async projections and reactors in this process (default true). */
  workers?: boolean;
  /** Create root on an empty database (default true; `forgelog worker` leaves that to serve). */
  bootstrap?: boolean;
  /** Send integrations' pending deliveries in this process (default: as `workers`). */
  deliveries?: boolean;
  /** On a Geo secondary, follow the primary in this process (default true; tests drive it by hand). */
  replicate?: boolean;
}

export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  // Before anything reads the log: how each event type is upcast and checked.
  installEventTypes();
  // No event type goes unprojected, and no projector or reactor waits for a type nobody appends.
  const problems = eventCoverageProblems(PROJECTORS, REACTORS);
  if (problems.length > 0) throw new StartupError(`the event types do not line up: ${problems.join('; ')}`);
  // Written asynchronously: a request's line costs no write(2) on its way, and lines logged
  // while a write is under way go out together in the next one. The shutdown waits for them
  // (logger.flush in shutdown.ts) before it exits, so its last steps come out whole and in
  // order; minLength 1 is what makes flush wait for the write under way (at 0 it returns at
  // once). On a crash pino's exit hook writes what is left.
  const logger = options.logger ?? pino({ level: config.logLevel, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: false, minLength: 1 }));
  const handle = options.handle ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  // Processes starting together on one PostgreSQL database take turns from here to the first
  // request: migrations, root's bootstrap and rebuilds are one process's at a time, and the
  // next finds them done (two would both create root, or drop each other's rebuild schema).
  const releaseStartup = handle.pool ? await holdSessionLock(handle.pool, 'startup') : async () => {};
  try {
    if (options.migrate !== false) await migrateToLatest(handle.db);
    const notifier = new Notifier(handle.sessions ?? handle.pool, logger);
    const commands: CommandContext = {
      db: handle.db,
      inlineProjectors: inlineProjectors(),
      notifier,
      now: options.now ?? (() => new Date()),
      streamCache: new StreamStateCache(),
      ids: new IdBlocks(),
      externalUrl: () => config.externalUrl,
      ...(handle.oneRoundTrip ? { oneRoundTrip: handle.oneRoundTrip } : {}),
    };
    // A Geo secondary writes nothing of its own: root, like everything, comes from the primary.
    const secondary = config.geo.secondary;
    const { token, rootTokenWarning } = options.bootstrap === false || secondary ? { token: undefined, rootTokenWarning: undefined } : await bootstrap(commands, config);
    if (rootTokenWarning) logger.warn(rootTokenWarning);
    if (token && !config.rootToken) {
      logger.warn({ username: 'root', token }, 'created the administrator root; this is its personal access token, shown once');
    }
    const credentials = new CredentialCache();
    // The embedded database is this process's alone: its own commits are every change.
    const hearsEveryAppend = handle.kind === 'pglite' ? () => true : () => notifier.listening;
    const idleMs = idleWait(hearsEveryAppend, config.pollIntervalMs);
    credentials.follow(notifier, usersProjector.handles.filter((type) => !(KEEPS_CREDENTIALS as readonly string[]).includes(type)), hearsEveryAppend);
    const asOf = new AsOfViews(handle, PROJECTORS, logger);
    const app: AppContext = { config, db: handle.db, commands, logger, credentials, asOf };
    let worker: ProjectionWorker | undefined;
    const sealing = new AbortController();
    let sealer: Promise<void> | undefined;
    let sender: Promise<void> | undefined;
    if (options.workers !== false) {
      // A secondary's reactors would append: the primary's run there, and their events arrive.
      worker = startWorker(handle, commands, notifier, logger, secondary ? [] : REACTORS, config.pollIntervalMs, idleMs);
      // Rebuilds (new or bumped projections) finish before the first request: a table swap
      // under a request's feet deadlocks it.
      await worker.catchUp();
      sealer = startSealer(handle, notifier, logger, sealing.signal, config, idleMs);
    }
    // A secondary sends nothing: its primary's deliveries are the primary's.
    if (!secondary && (options.deliveries ?? options.workers !== false)) sender = startSender(handle, config, commands.now, notifier, logger, sealing.signal, idleMs);
    if (worker || sender) await notifier.listen();
    let replicator: GeoReplicator | undefined;
    if (secondary && options.replicate !== false) {
      replicator = new GeoReplicator({ db: handle.db, geo: config.geo, inlineProjectors: commands.inlineProjectors, notifier, logger, now: commands.now });
      replicator.start();
    }
    return {
      config,
      handle,
      app,
      logger,
      notifier,
      bootstrapToken: token,
      worker,
      replicator,
      async close() {
        // Each step is logged: on SIGTERM these lines are how an operator sees the shutdown.
        if (replicator) {
          await replicator.stop();
          logger.info('stopped following the Geo primary');
        }
        sealing.abort();
        if (sealer) {
          await sealer;
          logger.info('stopped the sealer');
        }
        if (sender) {
          await sender;
          logger.info('stopped the delivery sender');
        }
        if (worker) {
          await worker.stop();
          logger.info('stopped the projections and reactors between two batches; released their advisory locks');
        }
        await notifier.close();
        await asOf.close();
        await handle.close();
        logger.info({ database: handle.kind }, 'closed the database');
      },
    };
  } finally {
    await releaseStartup();
  }
}

/**
 * Serves the API on config.port (0 picks a free port) and config.host; resolves once
 * listening, rejects when the address cannot be bound (EADDRINUSE, EADDRNOTAVAIL…).
 */
export function listen(runtime: Runtime, port = runtime.config.port, hostname = runtime.config.host): Promise<{ server: ServerType; port: number }> {
  const app = createApp(runtime.app, runtime.handle);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info) => resolve({ server, port: info.port }));
    server.once('error', reject);
    // Longer than the keep-alive of the clients and proxies in front (Node's 5 s default
    // races pooled client connections and resets them).
    (server as import('node:http').Server).keepAliveTimeout = 65_000;
  });
}

/**
 * While this process hears every append (its LISTEN connection is up; on the embedded
 * database, always), an idle loop — a follower that has read everything, the sealer, the
 * delivery sender with no retry due — waits for a wake-up and looks at the database by
 * itself only every LISTENING_POLL_MS, a safety net: an idle server sends no statement.
 * Without LISTEN it polls every FORGELOG_POLL_INTERVAL_MS; a lost or restored LISTEN
 * connection wakes every loop to choose again.
 */
const LISTENING_POLL_MS = 10 * 60_000;
const idleWait = (hearsEveryAppend: () => boolean, pollIntervalMs: number) => () => (hearsEveryAppend() ? Math.max(LISTENING_POLL_MS, pollIntervalMs) : pollIntervalMs);

/** Async projections and reactors, following the log in this process. */
function startWorker(handle: DatabaseHandle, commands: CommandContext, notifier: Notifier, logger: Logger, reactors: typeof REACTORS, pollIntervalMs: number, idleMs: () => number): ProjectionWorker {
  const worker = new ProjectionWorker(handle, {
    projectors: PROJECTORS,
    reactors,
    commands,
    notifier,
    pollIntervalMs,
    idleMs,
    onError: (name, error) =>
      isConnectionError(error)
        ? logger.warn({ err: error, projection: name }, 'database unavailable; the projection or reactor retries')
        : logger.error({ err: error, projection: name }, 'projection or reactor failed; retrying'),
  });
  worker.start();
  return worker;
}

/** Sends integrations' pending deliveries (chat webhooks) as they are recorded and as retries fall due. */
function startSender(handle: DatabaseHandle, config: Config, now: () => Date, notifier: Notifier, logger: Logger, signal: AbortSignal, idleMs: () => number): Promise<void> {
  return runDeliverySender(handle.db, {
    ...config.delivery,
    now,
    signal,
    pollMs: config.pollIntervalMs,
    idleMs,
    onRecorded: (wake) => notifier.onSignal(DELIVERIES_SIGNAL, wake),
    // Never the webhook URL: it is the integration's credential.
    onAttempt: (attempt) => logger.info({ delivery: attempt }, `integration delivery ${attempt.status}`),
    onError: (error) =>
      isConnectionError(error) ? logger.warn({ err: error }, 'database unavailable; deliveries retry') : logger.error({ err: error }, 'sending deliveries failed; retrying'),
  });
}

/**
 * Seals the log's new ranges (Merkle roots, chained) as they become readable, and with a
 * signing key publishes a signed tree head over the grown log every FORGELOG_LOG_HEAD_INTERVAL_MS.
 */
function startSealer(handle: DatabaseHandle, notifier: Notifier, logger: Logger, signal: AbortSignal, config: Config, idleMs: () => number): Promise<void> {
  const { signingKey, intervalMs: headIntervalMs } = config.logHeads;
  return runSealWorker(handle.db, {
    signal,
    intervalMs: config.pollIntervalMs,
    idleMs,
    ...(signingKey && {
      afterRound: async () => {
        const { published, dueInMs } = await publishTreeHead(handle.db, signingKey, { intervalMs: headIntervalMs });
        if (published) logger.info({ tree_size: published.treeSize, timestamp: published.timestamp }, 'published a signed tree head');
        return dueInMs === undefined ? {} : { wakeInMs: dueInMs };
      },
    }),
    onAppended: (wake) => notifier.onAppended(wake),
    onError: (error) =>
      isConnectionError(error) ? logger.warn({ err: error }, 'database unavailable; sealing retries') : logger.error({ err: error }, 'sealing failed; retrying'),
  });
}
