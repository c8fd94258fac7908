import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { precompiled, type Slot } from '../../precompiled.js';
import type { UserRow } from '../users.js';

const INT4_MAX = 2147483647;

// Fast path (not a pattern to copy): every authenticated request runs these, so they are
// compiled once (src/precompiled.ts). An area's queries are plain Kysely.
const userById = precompiled((db: Db, id: Slot<number>) => db.selectFrom('users').selectAll().where('id', '=', id));
const userByUsername = precompiled((db: Db, lowered: Slot<string>) =>
  db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['username']), '=', lowered)),
);

/** Ids outside PostgreSQL's integer range name no user (instead of a query error). */
export async function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  if (!Number.isSafeInteger(id) || id < 1 || id > INT4_MAX) return undefined;
  return userById.takeFirst(db, id);
}

export function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  return userByUsername.takeFirst(db, username.toLowerCase());
}

/** A path segment naming a user: numeric id or username. */
export function findUserByIdOrUsername(db: Db, idOrUsername: string): Promise<UserRow | undefined> {
  // GitLab's UserFinder: all digits is an id, anything else a username.
  return /^\d+$/.test(idOrUsername) ? findUserById(db, Number(idOrUsername)) : findUserByUsername(db, idOrUsername);
}

/**
 * Commit#author (User.find_by_any_email): the user whose email is each of `emails`, by the
 * email lowercased (forgelog has no secondary emails). One query, none for no email.
 */
export async function usersByEmail(db: Db, emails: readonly string[]): Promise<Map<string, { id: number; username: string }>> {
  const wanted = [...new Set(emails.map((e) => e.toLowerCase()))];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'username', sql<string>`lower(email)`.as('email')]).where(sql`lower(email)`, 'in', wanted).execute();
  return new Map(rows.map((r) => [r.email, { id: r.id, username: r.username }]));
}
