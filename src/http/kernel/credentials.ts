import { sql, type CompiledQuery } from 'kysely';
import type { Db } from '../../database/database.js';
import { LruMap } from '../../lru.js';
import { precompiled, type Slot } from '../../precompiled.js';
import type { Notifier } from '../../eventstore/notifier.js';
import type { UserEvent } from '../../domain/users.js';
import { AUTH_USER_COLUMNS, type AuthUser, type TokenRow } from '../../projections/users.js';

export interface Credentials {
  readonly token: TokenRow;
  readonly user: AuthUser;
}

/**
 * Valid credentials as this process last read them, by token digest: every authentication
 * query refreshes its entry. Bounded (README: Memory): the least recently used entry goes
 * when a new one would pass the capacity; its token is then authenticated by the query again.
 *
 * Writes take an entry as a hint only: a write authorized on one verifies it in its own
 * transaction (`withWriter` in auth.ts). Reads take it as it is while the cache is `current`:
 * every append that can change a token or its user's authentication columns (a type the
 * users projection handles, or an append of unknown types) empties it — this process's
 * synchronously as they commit, other processes' as their NOTIFY arrives — and it is current
 * only while the notifier hears the other processes (its LISTEN connection is up; on the
 * embedded database there are none). Another process's revocation is thus honoured here
 * within the few milliseconds its notification takes.
 */
export const CREDENTIAL_CACHE_CAPACITY = 2_000;

/**
 * What the users projection handles that changes no token row and no authentication column
 * (AUTH_USER_COLUMNS) of an existing user: these keep the cache. Every other type it handles
 * (profile updates, blocks, deletion, revocation, and any type added later) empties it.
 */
export const KEEPS_CREDENTIALS = [
  'UserCreated',
  'UserPasswordChanged',
  'UserStatusSet',
  'UserStatusCleared',
  'UserEmailChangeRequested',
  'UserAvatarChanged',
  'PersonalAccessTokenCreated',
  'UserCustomAttributeSet',
  'UserCustomAttributeDeleted',
] as const satisfies readonly UserEvent['type'][];

export class CredentialCache {
  private readonly entries: LruMap<string, Credentials>;
  /** Bumped by every invalidation: a query read before it does not refill the cache. */
  private generation = 0;
  private current: () => boolean = () => false;

  constructor(capacity = CREDENTIAL_CACHE_CAPACITY) {
    this.entries = new LruMap(capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  /** An entry for a write to verify in its transaction, current or not. */
  get(digest: string): Credentials | undefined {
    return this.entries.get(digest);
  }

  /** An entry a read may authenticate with: only while every change to it is heard. */
  getCurrent(digest: string): Credentials | undefined {
    return this.current() ? this.entries.get(digest) : undefined;
  }

  /** Where a query that will refill the cache starts (`set`'s `since`). */
  get epoch(): number {
    return this.generation;
  }

  /** Stores what a query read, unless an invalidation came after it started (`since`). */
  set(digest: string, credentials: Credentials, since = this.generation): void {
    if (since === this.generation) this.entries.set(digest, credentials);
  }

  delete(digest: string): void {
    this.entries.delete(digest);
  }

  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /**
   * Keeps the cache current through `notifier`: emptied by every append of one of `types`
   * (or of types not known, as when the LISTEN connection goes or comes back); `current`
   * while `hearsEveryone()`.
   */
  follow(
    notifier: Pick<Notifier, 'onCommitted' | 'onAppended'>,
    types: readonly string[],
    hearsEveryone: () => boolean,
  ): void {
    const relevant = new Set(types);
    const onAppend = (appended: readonly string[] | undefined) => {
      if (appended === undefined || appended.some((type) => relevant.has(type))) this.invalidate();
    };
    notifier.onCommitted(onAppend);
    notifier.onAppended(onAppend);
    this.current = hearsEveryone;
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
