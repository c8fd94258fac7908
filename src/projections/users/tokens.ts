import { sql, type CompiledQuery } from 'kysely';
import type { Db } from '../../database.js';
import { precompiled, type Slot } from '../../precompiled.js';
import { AUTH_USER_COLUMNS, type AuthUser, type TokenRow, type UserRow } from '../users.js';

// Every authenticated request runs these: compiled once (src/precompiled.ts).
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

const credentialCheck = precompiled((db: Db, tokenId: Slot<number>, today: Slot<string>, ...user: Slot<unknown>[]) =>
  db
    .selectFrom('personal_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .select(sql<number>`1 / count(*)::int`.as('held'))
    .where('t.id', '=', tokenId)
    .where('t.revoked', '=', false)
    .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', today)]))
    .where((eb) => eb.and(AUTH_USER_COLUMNS.map((column, i) => eb(`u.${column}`, 'is not distinct from', user[i] as never)))),
);

/**
 * A statement that raises division_by_zero (22012) unless the token is still valid on
 * `today` (not revoked, not expired) and its user's authentication columns are still as
 * `user` shows them: the precondition of a command authorized on cached credentials.
 */
export function credentialsStillHold(db: Db, token: TokenRow, user: AuthUser, today: string): CompiledQuery {
  return credentialCheck.compile(db, token.id, today, ...AUTH_USER_COLUMNS.map((column) => user[column]));
}

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
