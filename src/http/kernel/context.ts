import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../database/database.js';
import type { AuthUser, TokenRow } from '../../projections/users.js';
import type { CredentialCache } from './credentials.js';
import type { CommandContext } from '../../commands/kernel/context.js';
import type { AsOfViews } from '../../projections/as-of.js';

/** What every request handler can reach: configuration, the database and the command path. */
export interface AppContext {
  readonly config: Config;
  readonly db: Db;
  readonly commands: CommandContext;
  readonly logger: Logger;
  readonly credentials: CredentialCache;
  /** The read tables as they stood at a past log position (`as_of`). */
  readonly asOf: AsOfViews;
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

/** Who is calling: the effective user (after sudo), the token used and the sudo origin. */
export interface Auth {
  /** The columns authentication reads (`requireUserRow` has the whole row). */
  readonly user: AuthUser | null;
  readonly token: TokenRow | null;
  /** The administrator who used sudo, when the effective user came from `sudo`. */
  readonly sudoFrom: AuthUser | null;
}

/** No caller: a request its own secret authenticated (SCIM's token, the registry's notification), whose events have no actor. */
export const NOBODY: Auth = { user: null, token: null, sudoFrom: null };
