import { createHash } from 'node:crypto';
import { avatarUrlOf } from '../../domain/uploads.js';
import { LruMap } from '../../lru.js';
import type { UserRow } from '../users.js';

/**
 * Gravatar URLs by email as written: a list of 20 merge requests shows 40 users, and an MD5
 * per user was 4 % of such a request's CPU. An email maps to one URL forever, so nothing is
 * ever stale; the bound keeps the map small.
 */
const gravatars = new LruMap<string, string>(10_000);

/**
 * GitLab: a user without an uploaded avatar shows its Gravatar (enabled by default), at
 * 40 px × scale 2 — GravatarService with the plain URL, keyed by the MD5 of the email. The
 * API's user entities and the chat notifications' author both show it. An uploaded avatar
 * (`avatar_url` holds its path) is shown under the instance's URL, `externalUrl`.
 */
export function avatarUrl(row: Pick<UserRow, 'avatar_url' | 'email'>, externalUrl: string): string | null {
  if (row.avatar_url) return avatarUrlOf(externalUrl, row.avatar_url);
  let url = gravatars.get(row.email);
  if (url === undefined) {
    const hash = createHash('md5').update(row.email.trim().toLowerCase()).digest('hex');
    url = `https://www.gravatar.com/avatar/${hash}?s=80&d=identicon`;
    gravatars.set(row.email, url);
  }
  return url;
}
