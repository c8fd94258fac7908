import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { ACCESS, type MemberSourceType } from '../../domain/access.js';

/** The members API's reads: direct and inherited members, and the facts the owner invariants need. */

export interface MemberSource {
  readonly type: MemberSourceType;
  readonly id: number;
  /** Root → the group itself (groups), or root → the project's namespace (projects). */
  readonly traversalIds: readonly number[];
}

export interface MemberFilters {
  /** GitLab's User.search: name or username contains, or the exact email. */
  readonly query?: string | undefined;
  readonly userIds?: readonly number[] | undefined;
  readonly userId?: number | undefined;
}

const memberColumns = [
  'users.id',
  'users.name',
  'users.username',
  'users.state',
  'users.avatar_url',
  'users.email',
  'm.access_level',
  'm.expires_at',
  'm.created_at',
  'm.updated_at',
  'm.source_type',
  'm.source_id',
] as const;

/** Direct members of a source, joined with their users, filtered (select without order). */
export function directMembersQuery(db: Db, source: Pick<MemberSource, 'type' | 'id'>, filters: MemberFilters = {}) {
  const base = db
    .selectFrom('members as m')
    .innerJoin('users', 'users.id', 'm.user_id')
    .select(memberColumns)
    .where('m.source_type', '=', source.type)
    .where('m.source_id', '=', source.id);
  return base.where(memberFilters(filters));
}

/**
 * Members including inherited ones, one row per user: the source's own membership first,
 * otherwise the nearest ancestor group's (GitLab's MembersFinder / GroupMembersFinder).
 */
export function allMembersQuery(db: Db, source: MemberSource, filters: MemberFilters = {}) {
  // The groups a membership may come from: the group and its ancestors, or the project's.
  const groupIds = [...source.traversalIds];
  const depth = groupIds.length;
  const candidates = db
    .selectFrom('members')
    .selectAll('members')
    .select(
      sql<number>`case when members.source_type = 'Project' then 0 else ${depth} - array_position(${sql.val(groupIds)}::int[], members.source_id) + 1 end`.as('distance'),
    )
    .where((eb) => {
      const ors = [];
      if (source.type === 'Project') ors.push(eb.and([eb('members.source_type', '=', 'Project'), eb('members.source_id', '=', source.id)]));
      if (groupIds.length > 0) ors.push(eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', groupIds)]));
      return eb.or(ors);
    });
  const nearest = db.selectFrom(candidates.as('c')).distinctOn('c.user_id').selectAll('c').orderBy('c.user_id').orderBy('c.distance');
  const base = db.selectFrom(nearest.as('m')).innerJoin('users', 'users.id', 'm.user_id').select(memberColumns);
  return base.where(memberFilters(filters));
}

/** The filters as one SQL condition over the joined `users` row. */
function memberFilters(filters: MemberFilters): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [];
  if (filters.userId !== undefined) parts.push(sql<SqlBool>`users.id = ${filters.userId}`);
  if (filters.userIds !== undefined && filters.userIds.length > 0) parts.push(sql<SqlBool>`users.id = any(${sql.val([...filters.userIds])}::int[])`);
  if (filters.query !== undefined && filters.query !== '') {
    const like = `%${filters.query.replace(/[\\%_]/g, '\\$&')}%`;
    parts.push(sql<SqlBool>`(users.name ilike ${like} or users.username ilike ${like} or lower(users.email) = ${filters.query.toLowerCase()})`);
  }
  return parts.length === 0 ? sql<SqlBool>`true` : sql<SqlBool>`${sql.join(parts, sql` and `)}`;
}

export type MemberView = Awaited<ReturnType<ReturnType<typeof directMembersQuery>['executeTakeFirstOrThrow']>>;

/**
 * Owners of the given groups whose accounts are active — GitLab counts the ancestors'
 * owners (`members_with_parents.owners`) before refusing to drop a group's last owner.
 */
export async function activeOwnerCount(db: Db, groupIds: readonly number[]): Promise<number> {
  if (groupIds.length === 0) return 0;
  const row = await db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(sql<string>`count(distinct members.user_id)`.as('count'))
    .where('members.source_type', '=', 'Namespace')
    .where('members.source_id', 'in', [...groupIds])
    .where('members.access_level', '=', ACCESS.OWNER)
    .where('users.state', '=', 'active')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Members of a source whose accounts are active (the owner invariant counts only these). */
export async function activeMemberUserIds(db: Db, source: Pick<MemberSource, 'type' | 'id'>): Promise<number[]> {
  const rows = await db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select('members.user_id')
    .where('members.source_type', '=', source.type)
    .where('members.source_id', '=', source.id)
    .where('users.state', '=', 'active')
    .execute();
  return rows.map((r) => r.user_id);
}

/**
 * The user's highest membership among the given groups, with the group's name — GitLab's
 * `Member#highest_group_member`, which a new level may not undercut.
 */
export async function highestGroupMembership(db: Db, groupIds: readonly number[], userId: number): Promise<{ access_level: number; group_name: string } | null> {
  if (groupIds.length === 0) return null;
  const row = await db
    .selectFrom('members')
    .innerJoin('namespaces', 'namespaces.id', 'members.source_id')
    .select(['members.access_level', 'namespaces.name as group_name'])
    .where('members.source_type', '=', 'Namespace')
    .where('members.source_id', 'in', [...groupIds])
    .where('members.user_id', '=', userId)
    .orderBy('members.access_level', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ?? null;
}

/** Groups where the user is the only direct owner (GitLab's User#solo_owned_groups). */
export async function soleOwnedGroupCount(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('members as m')
    .innerJoin('namespaces as n', (join) => join.onRef('n.id', '=', 'm.source_id').on('n.kind', '=', 'group'))
    .select(sql<string>`count(*)`.as('count'))
    .where('m.source_type', '=', 'Namespace')
    .where('m.user_id', '=', userId)
    .where('m.access_level', '=', ACCESS.OWNER)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('members as o')
            .select('o.user_id')
            .where('o.source_type', '=', 'Namespace')
            .whereRef('o.source_id', '=', 'm.source_id')
            .where('o.access_level', '=', ACCESS.OWNER)
            .where('o.user_id', '<>', userId),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
