import { sql } from 'kysely';
import { createPersonalAccessToken, createUser } from './commands/users.js';
import type { Config } from './config.js';
import { tokenDigest } from './security/secrets.js';
import { findUserByUsername } from './projections/users/queries.js';
import { findTokenWithUser } from './projections/users/tokens.js';
import type { CommandContext } from './commands/kernel/context.js';

export const ROOT_TOKEN_SCOPES = ['api', 'sudo', 'read_user', 'read_api'] as const;

/**
 * On first start with an empty database: the administrator `root` (id 1) and its personal
 * access token — FORGELOG_ROOT_TOKEN when set, otherwise a generated one, returned once.
 */
export async function bootstrap(ctx: CommandContext, config: Config): Promise<{ created: boolean; token?: string; rootTokenWarning?: string }> {
  const existing = await ctx.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (existing) {
    const warning = config.rootToken ? await rootTokenWarning(ctx, config.rootToken) : undefined;
    return { created: false, ...(warning ? { rootTokenWarning: warning } : {}) };
  }
  const metadata = { actor_id: null, actor_username: 'bootstrap' };
  await createUser(
    { ctx, metadata },
    { id: 1, profile: { username: 'root', name: 'Administrator', email: 'admin@example.com', is_admin: true }, randomPassword: true, skipConfirmation: true },
  );
  // Later ids continue after root's.
  await sql`select setval('users_id_seq', greatest((select max(id) from users), 1))`.execute(ctx.db);
  const { token } = await createPersonalAccessToken(
    { ctx, metadata: { ...metadata, actor_id: 1, actor_username: 'root' } },
    1,
    { name: 'bootstrap', scopes: [...ROOT_TOKEN_SCOPES], expiresAt: null, impersonation: false, ...(config.rootToken ? { token: config.rootToken } : {}) },
  );
  return { created: true, token };
}

/**
 * FORGELOG_ROOT_TOKEN is read only when bootstrap creates root. Set on a later start, it
 * changes nothing: say so when it is not a token root can use (the message never holds it).
 */
async function rootTokenWarning(ctx: CommandContext, rootToken: string): Promise<string | undefined> {
  const found = await findTokenWithUser(ctx.db, tokenDigest(rootToken));
  const today = ctx.now().toISOString().slice(0, 10);
  const problem = !found
    ? 'is no token of this database'
    : found.user.id !== 1
      ? "is not root's token (it belongs to another user)"
      : found.token.revoked
        ? "is root's token, revoked"
        : found.token.expires_at !== null && found.token.expires_at <= today
          ? `is root's token, expired on ${found.token.expires_at}`
          : undefined;
  return problem && `FORGELOG_ROOT_TOKEN ${problem}; it is read only at the first start, when root is created, and is ignored now (mint a token with: forgelog token --user root --scopes api,sudo)`;
}

export async function mintToken(ctx: CommandContext, username: string, scopes: string[], name = 'cli') {
  const user = await findUserByUsername(ctx.db, username);
  if (!user) throw new Error(`no user named ${username}`);
  return createPersonalAccessToken(
    { ctx, metadata: { actor_id: null, actor_username: 'forgelog-cli' } },
    user.id,
    { name, scopes: scopes as (typeof ROOT_TOKEN_SCOPES)[number][], expiresAt: null, impersonation: false },
  );
}
