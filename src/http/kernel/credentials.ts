import type { AuthUser, TokenRow } from '../../projections/users.js';

export interface Credentials {
  readonly token: TokenRow;
  readonly user: AuthUser;
}

/**
 * Valid credentials as this process last read them, by token digest: every authentication
 * query refreshes its entry. Only a hint — a write authorized on an entry verifies it in its
 * own transaction (`requireUserForCommands` in auth.ts), so an entry made stale by another
 * process (a revoked token, a blocked user) is never acted on. Bounded: the oldest entry
 * goes when a new one would pass the limit.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Credentials>();

  constructor(private readonly limit = 10_000) {}

  get(digest: string): Credentials | undefined {
    return this.entries.get(digest);
  }

  set(digest: string, credentials: Credentials): void {
    if (!this.entries.has(digest) && this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(digest, credentials);
  }

  delete(digest: string): void {
    this.entries.delete(digest);
  }
}
