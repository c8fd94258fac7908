import type { Db } from '../../database/database.js';
import { precompiled, type Slot } from '../../precompiled.js';
import { AUTH_USER_COLUMNS, type AuthUser, type TokenRow, type UserRow } from '../users.js';

// Fast path (not a pattern to copy): every authenticated request runs these, so they are
// compiled once (src/precompiled.ts). An area's queries are plain Kysely.
const TOKEN_COLUMNS = [
  't.id as token_id',
  't.name as token_name',
  't.token_digest as token_digest',
  't.scopes as token_scopes',
  't.impersonation as token_impersonation',
  't.revoked as token_revoked',
  't.expires_at as token_expires_at',
  't.created_at as token_created_at',
] as const;
const tokenWithAuthUser = precompiled((db: Db, digest: Slot<string>) =>
  db
    .selectFrom('personal_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .select(AUTH_USER_COLUMNS.map((column) => `u.${column}` as const))
    .select(TOKEN_COLUMNS)
    .where('t.token_digest', '=', digest),
);
const tokenWithWholeUser = precompiled((db: Db, digest: Slot<string>) =>
  db.selectFrom('personal_access_tokens as t').innerJoin('users as u', 'u.id', 't.user_id').selectAll('u').select(TOKEN_COLUMNS).where('t.token_digest', '=', digest),
);

/** A token and its user in one round trip (every authenticated request asks this): the whole user row, or what authentication needs. */
export async function findTokenWithUser(db: Db, digest: string, whole: true): Promise<{ token: TokenRow; user: UserRow } | undefined>;
export async function findTokenWithUser(db: Db, digest: string, whole?: boolean): Promise<{ token: TokenRow; user: AuthUser } | undefined>;
export async function findTokenWithUser(db: Db, digest: string, whole = false): Promise<{ token: TokenRow; user: AuthUser } | undefined> {
  const row = whole ? await tokenWithWholeUser.takeFirst(db, digest) : await tokenWithAuthUser.takeFirst(db, digest);
  if (!row) return undefined;
  const { token_id, token_name, token_digest, token_scopes, token_impersonation, token_revoked, token_expires_at, token_created_at, ...user } = row;
  const token: TokenRow = {
    id: token_id,
    user_id: user.id,
    name: token_name,
    token_digest,
    scopes: token_scopes,
    impersonation: token_impersonation,
    revoked: token_revoked,
    expires_at: token_expires_at,
    created_at: token_created_at,
  };
  return { token, user };
}
