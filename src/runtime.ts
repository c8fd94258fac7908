import { serve, type ServerType } from '@hono/node-server';
import { pino, type Logger } from 'pino';
import { bootstrap } from './bootstrap.js';
import type { CommandContext } from './commands/handler.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './database.js';
import { Notifier } from './eventstore/notifier.js';
import { createApp } from './http/app.js';
import type { AppContext } from './http/kernel/context.js';
import { migrateToLatest } from './migrate.js';
import { inlineProjectors } from './projections/registry.js';

/** A running forgelog: database, command path and (optionally) the HTTP server. */
export interface Runtime {
  readonly config: Config;
  readonly handle: DatabaseHandle;
  readonly app: AppContext;
  readonly logger: Logger;
  readonly notifier: Notifier;
  /** The root token, when bootstrap created root in this start. */
  readonly bootstrapToken: string | undefined;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  handle?: DatabaseHandle;
  logger?: Logger;
  migrate?: boolean;
  now?: () => Date;
}

export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = options.logger ?? pino({ level: config.logLevel, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
  const handle = options.handle ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  if (options.migrate !== false) await migrateToLatest(handle.db);
  const notifier = new Notifier(handle.pool);
  const commands: CommandContext = { db: handle.db, inlineProjectors: inlineProjectors(), notifier, now: options.now ?? (() => new Date()) };
  const { token } = await bootstrap(commands, config);
  if (token && !config.rootToken) {
    logger.warn({ username: 'root', token }, 'created the administrator root; this is its personal access token, shown once');
  }
  const app: AppContext = { config, db: handle.db, commands, logger };
  return {
    config,
    handle,
    app,
    logger,
    notifier,
    bootstrapToken: token,
    async close() {
      await notifier.close();
      await handle.close();
    },
  };
}

/** Serves the API on config.port (0 picks a free port); resolves once listening. */
export function listen(runtime: Runtime, port = runtime.config.port): Promise<{ server: ServerType; port: number }> {
  const app = createApp(runtime.app);
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname: '0.0.0.0' }, (info) => resolve({ server, port: info.port }));
  });
}
