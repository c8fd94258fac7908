import { sql, type SqlBool } from 'kysely';
import type { Db } from '../database.js';
import type { MemberSourceType, Viewer } from '../domain/access.js';
import { effectiveRole } from '../domain/access.js';
import type { UserRow } from './users.js';

/**
 * Reads the memberships the policy in src/domain/access.ts decides on: direct roles,
 * roles inherited through ancestor groups, and SQL filters for "what may this viewer see".
 */

export const viewerOf = (user: Pick<UserRow, 'id' | 'is_admin' | 'external'> | null | undefined): Viewer | null =>
  user ? { id: user.id, isAdmin: user.is_admin, external: user.external } : null;

/** The date memberships and shares expire against (GitLab: they end after their `expires_at`). */
export const today = () => new Date().toISOString().slice(0, 10);

/**
 * Rows of `members` or `project_group_links` that have not expired, evaluated per query
 * (the date moves); `alias` qualifies the column when the query joins several tables.
 */
export const unexpired = (alias?: string) => {
  const column = sql.ref(alias ? `${alias}.expires_at` : 'expires_at');
  return sql<SqlBool>`(${column} is null or ${column} >= ${today()}::date)`;
};

/** The user's unexpired direct access levels on some groups or projects, by their id. */
export async function accessLevelsOn(db: Db, userId: number, sourceType: MemberSourceType, sourceIds: readonly number[]): Promise<Map<number, number>> {
  if (sourceIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('members')
    .select(['source_id', 'access_level'])
    .where('source_type', '=', sourceType)
    .where('user_id', '=', userId)
    .where('source_id', 'in', [...sourceIds])
    .where(unexpired())
    .execute();
  return new Map(rows.map((r) => [r.source_id, r.access_level]));
}

/** The user's role in a namespace: its own membership, else the nearest ancestor's. */
export async function namespaceRole(db: Db, userId: number | undefined, traversalIds: readonly number[]): Promise<number | null> {
  if (userId === undefined || traversalIds.length === 0) return null;
  const byNamespace = await accessLevelsOn(db, userId, 'Namespace', traversalIds);
  const nearestFirst = [...traversalIds].reverse().map((id) => byNamespace.get(id) ?? null);
  return effectiveRole(null, nearestFirst);
}

/**
 * The user's role in a project: its own membership, else the nearest ancestor group's; a
 * share of the project with one of the user's groups counts too, up to the share's level
 * (GitLab's project_authorizations keep the highest).
 */
export async function projectRole(db: Db, userId: number | undefined, project: { id: number; traversal_ids: readonly number[] }): Promise<number | null> {
  if (userId === undefined) return null;
  // Every project request asks this: the memberships in one query, the shares beside it.
  const [memberships, shared] = await Promise.all([
    db
      .selectFrom('members')
      .select(['source_type', 'source_id', 'access_level'])
      .where('user_id', '=', userId)
      .where((eb) =>
        eb.or([
          eb.and([eb('source_type', '=', 'Project'), eb('source_id', '=', project.id)]),
          eb.and([eb('source_type', '=', 'Namespace'), eb('source_id', '=', sql<number>`any(${[...project.traversal_ids]}::integer[])`)]),
        ]),
      )
      .where(unexpired())
      .execute(),
    sharedRole(db, userId, project.id),
  ]);
  const own = memberships.find((m) => m.source_type === 'Project')?.access_level ?? null;
  const groups = new Map(memberships.filter((m) => m.source_type === 'Namespace').map((m) => [m.source_id, m.access_level]));
  const nearestFirst = [...project.traversal_ids].reverse().map((id) => groups.get(id) ?? null);
  const role = effectiveRole(own, nearestFirst);
  return shared !== null && (role === null || shared > role) ? shared : role;
}

/** The highest level a share of the project gives the user (the share's level caps the membership's). */
async function sharedRole(db: Db, userId: number, projectId: number): Promise<number | null> {
  const { rows } = await sql<{ level: number | null }>`
    select max(least(l.group_access, m.access_level)) as level
      from project_group_links l
      join namespaces g on g.id = l.group_id
      join members m on m.source_type = 'Namespace' and m.user_id = ${userId} and m.source_id = any(g.traversal_ids)
                    and ${unexpired('m')}
     where l.project_id = ${projectId} and ${unexpired('l')}`.execute(db);
  return rows[0]?.level ?? null;
}

/** Namespace ids where the user holds an active direct membership. */
export function memberNamespaceIds(userId: number) {
  return sql<number[]>`array(select source_id from members where user_id = ${userId} and source_type = 'Namespace' and ${unexpired()})`;
}
