import { sql, type CompiledQuery } from 'kysely';
import type { Db } from '../../database/database.js';
import { LruMap } from '../../lru.js';
import { precompiled, type Slot } from '../../precompiled.js';
import { AUTH_USER_COLUMNS, type AuthUser, type TokenRow } from '../../projections/users.js';

export interface Credentials {
  readonly token: TokenRow;
  readonly user: AuthUser;
}

/**
 * Valid credentials as this process last read them, by token digest: every authentication
 * query refreshes its entry. Only a hint — a write authorized on an entry verifies it in its
 * own transaction (`withWriter` in auth.ts), so an entry made stale by another
 * process (a revoked token, a blocked user) is never acted on. Bounded (README: Memory): the
 * least recently used entry goes when a new one would pass the capacity; its token is then
 * authenticated by the query again.
 */
export const CREDENTIAL_CACHE_CAPACITY = 2_000;

export class CredentialCache {
  private readonly entries: LruMap<string, Credentials>;

  constructor(capacity = CREDENTIAL_CACHE_CAPACITY) {
    this.entries = new LruMap(capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  get(digest: string): Credentials | undefined {
    return this.entries.get(digest);
  }

  set(digest: string, credentials: Credentials): void {
    this.entries.set(digest, credentials);
  }

  delete(digest: string): void {
    this.entries.delete(digest);
  }
}

/** The same token, in the same state, for a user whose authentication columns are the same. */
export function sameCredentials(a: Credentials, b: { token: TokenRow | null; user: AuthUser | null }): boolean {
  if (!b.token || !b.user || a.token.id !== b.token.id || a.token.revoked !== b.token.revoked || a.token.expires_at !== b.token.expires_at) return false;
  return AUTH_USER_COLUMNS.every((column) => a.user[column] === b.user![column]);
}

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
export function credentialsStillHold(db: Db, credentials: Credentials, today: string): CompiledQuery {
  return credentialCheck.compile(db, credentials.token.id, today, ...AUTH_USER_COLUMNS.map((column) => credentials.user[column]));
}
