import type { Context } from 'hono';
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../../database/database.js';
import { soleOwnedGroupCount as soleOwnedGroups } from '../../../projections/members/members.js';
import type { UserRow } from '../../../projections/users.js';
import { findUserById } from '../../../projections/users/queries.js';
import { USER_SCOPES, authenticate } from '../../kernel/auth.js';
import { appContext, type Auth } from '../../kernel/context.js';
import { forbidden, notFound } from '../../../domain/errors.js';
import { routeNotFound, unauthorized } from '../../kernel/errors.js';


// ───────────────────────────── Helpers ─────────────────────────────

/**
 * `:id` of the users resource has GitLab's route requirement `[0-9]*`: anything else matches
 * no route at all (404 before authentication). Too large an id names no user.
 */
export function userIdFromPath(c: Context, name = 'id'): number {
  const value = c.req.param(name) ?? '';
  if (!/^\d+$/.test(value)) throw routeNotFound();
  return Number(value);
}

export async function existingUser(c: Context, id: number): Promise<UserRow> {
  const user = await findUserById(appContext(c).db, id);
  if (!user) throw notFound('User');
  return user;
}

/** GitLab's authenticated_as_admin! after authentication: 403 for non-admins. */
export function mustBeAdmin(auth: Auth): asserts auth is Auth & { user: UserRow } {
  if (!auth.user) throw unauthorized();
  if (!auth.user.is_admin) throw forbidden();
}

/** GitLab's `before { authenticated_as_admin! }`: runs before parameter validation. */
export async function requireAdminFirst(c: Context) {
  const auth = await authenticate(c, USER_SCOPES(c));
  mustBeAdmin(auth);
  return auth;
}

/** GitLab renders a status message with its emoji pipeline: escaped text (emoji codes stay as text here). */
export const statusHtml = (message: string | null) =>
  (message ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

// Gitlab::SQL::Pattern: words of 3+ characters (or "quoted strings") match anywhere; a
// shorter query only matches the whole (lower-cased) value.
export const QUOTED_WORD = /(?<=^| )"[^"]+"(?= |$)/g;
export const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, '\\$&')}%`;

export function fuzzyWords(query: string): string[] {
  const quoted = query.match(QUOTED_WORD) ?? [];
  let rest = query;
  for (const q of quoted) rest = rest.replace(q, '');
  return [...rest.split(/\s+/).filter(Boolean), ...quoted.map((q) => q.slice(1, -1))].filter((word) => word.length >= 3);
}

export type UserQuery = SelectQueryBuilder<Database, 'users', UserRow>;

/** GitLab's User.search: name or username (fuzzy), or the exact email; '@' prefix ignored. */
export function searchUsers(query: UserQuery, search: string): { query: UserQuery; term: string } | null {
  const term = search.replace(/^@/, '').toLowerCase().replace(/\s+/g, ' ').trim();
  if (term === '') return null;
  const words = fuzzyWords(term);
  const fuzzy = (column: 'name' | 'username') =>
    words.length > 0 ? sql<boolean>`(${sql.join(words.map((w) => sql`${sql.ref(column)} ilike ${likePattern(w)}`), sql` and `)})` : sql<boolean>`lower(${sql.ref(column)}) = ${term}`;
  return { query: query.where(sql<boolean>`(${fuzzy('name')} or ${fuzzy('username')} or lower(email) = ${term})`), term };
}

/** Groups where the user is the only owner: GitLab refuses a soft delete of such a user. */
export function soleOwnedGroupCount(c: Context, userId: number): Promise<number> {
  return soleOwnedGroups(appContext(c).db, userId);
}


