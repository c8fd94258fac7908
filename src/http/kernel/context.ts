import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { CommandContext } from '../../commands/handler.js';
import type { Config } from '../../config.js';
import type { Db } from '../../database.js';
import type { Auth } from './auth.js';
import type { CredentialCache } from './credentials.js';

/** What every request handler can reach: configuration, the database and the command path. */
export interface AppContext {
  readonly config: Config;
  readonly db: Db;
  readonly commands: CommandContext;
  readonly logger: Logger;
  readonly credentials: CredentialCache;
}

export interface AppEnv {
  Variables: {
    app: AppContext;
    requestId: string;
    auth: Auth;
  };
}

export const appContext = (c: Context): AppContext => c.get('app' as never) as AppContext;

/** Today's UTC date by the command clock: tokens and memberships expire against it. */
export const today = (c: Context) => appContext(c).commands.now().toISOString().slice(0, 10);
