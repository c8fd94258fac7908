import { createHash } from 'node:crypto';
import { avatarUrlOf } from '../../domain/uploads.js';
import type { UserRow } from '../users.js';

/**
 * GitLab: a user without an uploaded avatar shows its Gravatar (enabled by default), at
 * 40 px × scale 2 — GravatarService with the plain URL, keyed by the MD5 of the email. The
 * API's user entities and the chat notifications' author both show it. An uploaded avatar
 * (`avatar_url` holds its path) is shown under the instance's URL, `externalUrl`.
 */
export function avatarUrl(row: Pick<UserRow, 'avatar_url' | 'email'>, externalUrl: string): string | null {
  if (row.avatar_url) return avatarUrlOf(externalUrl, row.avatar_url);
  const hash = createHash('md5').update(row.email.trim().toLowerCase()).digest('hex');
  return `https://www.gravatar.com/avatar/${hash}?s=80&d=identicon`;
}
