import type { ColumnType, Selectable } from 'kysely';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../database.js';
import type { MemberSourceType } from '../domain/access.js';
import { ACCESS } from '../domain/access.js';
import { unhandled } from '../domain/decider.js';
import { eventTypesOf } from '../domain/events.js';
import { memberEvents, type MemberEvent } from '../domain/members.js';
import type { UserEvent } from '../domain/users.js';
import type { ProjectedEvent } from '../eventstore/types.js';
import type { Projector } from './projector.js';
import { claimStreamVersion, type StreamVersionsTable } from './stream-versions.js';

// ───────────────────────────── Tables ─────────────────────────────

type Timestamp = ColumnType<Date, string, string>;

/** Direct memberships of groups (source_type 'Namespace') and projects ('Project'). */
export interface MembersTable {
  source_type: MemberSourceType;
  source_id: number;
  user_id: number;
  access_level: number;
  expires_at: string | null;
  created_by_id: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccessRequestsTable {
  source_type: MemberSourceType;
  source_id: number;
  user_id: number;
  requested_at: Timestamp;
}

export interface MembersReadTables {
  members: MembersTable;
  access_requests: AccessRequestsTable;
  members_stream_versions: StreamVersionsTable;
}

export type MemberRow = Selectable<MembersTable>;
export type AccessRequestRow = Selectable<AccessRequestsTable>;

// ───────────────────────────── Projector ─────────────────────────────

/** Deletions elsewhere that take memberships with them (handled by name: other areas' events). */
const FOREIGN_EVENT_TYPES = ['UserDeleted', 'GroupDeleted', 'ProjectDeleted'] as const;

type ForeignEvent =
  | Extract<UserEvent, { type: 'UserDeleted' }>
  | { readonly type: 'GroupDeleted'; readonly data: { readonly id: number } }
  | { readonly type: 'ProjectDeleted'; readonly data: { readonly id: number } };

/**
 * Inline: the members API reads what it just wrote. An event of a members stream is applied
 * once: guarded by the stream version (members_stream_versions), which outlives the rows, so
 * a MemberAdded replayed after the MemberRemoved does not bring the member back. The other
 * areas' deletions delete by absolute conditions: replayed, they find nothing more to delete.
 */
export const membersProjector: Projector = {
  name: 'members',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(memberEvents), ...FOREIGN_EVENT_TYPES],
  tables: ['members', 'access_requests', 'members_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (MemberEvent | ForeignEvent) & ProjectedEvent;
    const at = stored.occurredAt.toISOString();
    switch (event.type) {
      case 'UserDeleted':
        await trx.deleteFrom('members').where('user_id', '=', event.data.id).execute();
        await trx.deleteFrom('access_requests').where('user_id', '=', event.data.id).execute();
        return;
      case 'GroupDeleted':
      case 'ProjectDeleted': {
        const sourceType: MemberSourceType = event.type === 'GroupDeleted' ? 'Namespace' : 'Project';
        await trx.deleteFrom('members').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
        await trx.deleteFrom('access_requests').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
        return;
      }
    }
    if (!(await claimStreamVersion(trx, 'members_stream_versions', stored))) return;
    const { source_type, source_id, user_id } = event.data;
    const ofMember = <Q extends { where: (...args: any[]) => any }>(q: Q): Q =>
      q.where('source_type', '=', source_type).where('source_id', '=', source_id).where('user_id', '=', user_id) as Q;
    const dropRequest = () => ofMember(trx.deleteFrom('access_requests')).execute();
    switch (event.type) {
      case 'MemberAdded':
      case 'AccessRequestApproved': {
        const d = event.data;
        const createdBy = event.type === 'MemberAdded' ? event.data.created_by_id : event.data.approved_by_id;
        await dropRequest();
        await trx
          .insertInto('members')
          .values({ source_type, source_id, user_id, access_level: d.access_level, expires_at: d.expires_at, created_by_id: createdBy, created_at: at, updated_at: at })
          .onConflict((oc) => oc.columns(['source_type', 'source_id', 'user_id']).doNothing())
          .execute();
        return;
      }
      case 'MemberUpdated':
        await ofMember(trx.updateTable('members').set({ access_level: event.data.access_level, expires_at: event.data.expires_at, updated_at: at })).execute();
        return;
      case 'MemberRemoved':
        await ofMember(trx.deleteFrom('members')).execute();
        return;
      case 'AccessRequested':
        await trx
          .insertInto('access_requests')
          .values({ source_type, source_id, user_id, requested_at: at })
          .onConflict((oc) => oc.columns(['source_type', 'source_id', 'user_id']).doNothing())
          .execute();
        return;
      case 'AccessRequestDenied':
        await dropRequest();
        return;
      default:
        return unhandled(event);
    }
  },
};

// ───────────────────────────── Queries ─────────────────────────────

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

/** GitLab orders members by membership id, i.e. by when they joined. */
export const MEMBER_ORDER = sql`m.created_at, users.id`;

/** Pending access requests of a source, joined with their users (select without order). */
export function accessRequestsQuery(db: Db, source: Pick<MemberSource, 'type' | 'id'>) {
  return db
    .selectFrom('access_requests as r')
    .innerJoin('users', 'users.id', 'r.user_id')
    .select(['users.id', 'users.name', 'users.username', 'users.state', 'users.avatar_url', 'users.email', 'r.requested_at'])
    .where('r.source_type', '=', source.type)
    .where('r.source_id', '=', source.id);
}

export type AccessRequestView = Awaited<ReturnType<ReturnType<typeof accessRequestsQuery>['executeTakeFirstOrThrow']>>;

/** Whether the user has a pending access request on the source. */
export async function hasAccessRequest(db: Db, source: Pick<MemberSource, 'type' | 'id'>, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('access_requests')
    .select('user_id')
    .where('source_type', '=', source.type)
    .where('source_id', '=', source.id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

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

/** The membership sources a user belongs to or requested (for cleaning up after a deleted user). */
export async function sourcesOfUser(db: Db, userId: number): Promise<{ type: MemberSourceType; id: number }[]> {
  const rows = await db
    .selectFrom('members')
    .select(['source_type', 'source_id'])
    .where('user_id', '=', userId)
    .union(db.selectFrom('access_requests').select(['source_type', 'source_id']).where('user_id', '=', userId))
    .execute();
  return rows.map((r) => ({ type: r.source_type, id: r.source_id }));
}
