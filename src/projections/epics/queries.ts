import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import type { EpicStatus } from '../../domain/epics.js';
import { groupAccessLevel } from '../access.js';
import { groupReadableBy } from '../groups/queries.js';

export interface EpicFilters {
  readonly state: EpicStatus | 'all';
  readonly authorId?: number | undefined;
  /** Every one of these labels (IssuableFinder's label_name). */
  readonly labels?: readonly string[] | undefined;
  readonly search?: string | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly updatedAfter?: Date | undefined;
  readonly updatedBefore?: Date | undefined;
  readonly includeAncestorGroups: boolean;
  readonly includeDescendantGroups: boolean;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** An epic with what its entity shows of others: its group's path, its author, and the viewer's level on its group. */
function epicsWithAuthor(db: Db, viewer: Viewer | null) {
  return db
    .selectFrom('epics')
    .innerJoin('namespaces as g', 'g.id', 'epics.group_id')
    .leftJoin('users as a', 'a.id', 'epics.author_id')
    .selectAll('epics')
    .select(['g.full_path as group_full_path', 'g.visibility', 'g.request_access_enabled', 'g.project_creation_level', 'g.subgroup_creation_level', 'a.name as author_name', 'a.username as author_username', 'a.state as author_state', 'a.avatar_url as author_avatar_url', 'a.email as author_email'])
    .select(groupAccessLevel(viewer, sql.ref('epics.group_id')).as('access_level'));
}

export type EpicView = Awaited<ReturnType<ReturnType<typeof epicsWithAuthor>['executeTakeFirstOrThrow']>>;

/**
 * GitLab's EpicsFinder: the group's epics, its descendants' (default) and its ancestors' (on
 * request), of the groups the viewer may read; then IssuableFinder's filters. Search matches
 * title or description (Gitlab::SQL::Pattern: a part of either from 3 characters, the whole
 * of it below).
 */
export function epicsQuery(db: Db, viewer: Viewer | null, group: { id: number; traversal_ids: number[] }, filters: EpicFilters) {
  const groups = db
    .selectFrom('namespaces')
    .select('namespaces.id')
    .where('kind', '=', 'group')
    .where('pending_delete', '=', false)
    .where((eb) =>
      eb.or([
        eb('namespaces.id', '=', group.id),
        ...(filters.includeDescendantGroups ? [eb(sql<SqlBool>`traversal_ids && array[${group.id}]::integer[]`, '=', true)] : []),
        ...(filters.includeAncestorGroups && group.traversal_ids.length > 1 ? [eb('namespaces.id', 'in', group.traversal_ids)] : []),
      ]),
    )
    .where(groupReadableBy(viewer));
  let query = epicsWithAuthor(db, viewer).where('epics.group_id', 'in', groups);
  if (filters.state !== 'all') query = query.where('epics.state', '=', filters.state);
  if (filters.authorId !== undefined) query = query.where('epics.author_id', '=', filters.authorId);
  if (filters.labels && filters.labels.length > 0) query = query.where(sql<SqlBool>`epics.labels @> ${sql.val([...filters.labels])}::text[]`);
  if (filters.search !== undefined && filters.search !== '') {
    const term = filters.search;
    query =
      term.length >= 3
        ? query.where((eb) => eb.or([eb('epics.title', 'ilike', `%${escapeLike(term)}%`), eb('epics.description', 'ilike', `%${escapeLike(term)}%`)]))
        : query.where((eb) => eb.or([eb(sql`lower(epics.title)`, '=', term.toLowerCase()), eb(sql`lower(epics.description)`, '=', term.toLowerCase())]));
  }
  if (filters.createdAfter) query = query.where('epics.created_at', '>=', filters.createdAfter);
  if (filters.createdBefore) query = query.where('epics.created_at', '<=', filters.createdBefore);
  if (filters.updatedAfter) query = query.where('epics.updated_at', '>=', filters.updatedAfter);
  if (filters.updatedBefore) query = query.where('epics.updated_at', '<=', filters.updatedBefore);
  return query;
}

/** `user_group.epics.find_by(iid:)`. */
export const findEpic = (db: Db, viewer: Viewer | null, groupId: number, iid: number): Promise<EpicView | undefined> =>
  epicsWithAuthor(db, viewer).where('epics.group_id', '=', groupId).where('epics.iid', '=', iid).executeTakeFirst();

export const findEpicById = (db: Db, viewer: Viewer | null, id: number): Promise<EpicView | undefined> =>
  epicsWithAuthor(db, viewer).where('epics.id', '=', id).executeTakeFirst();

/** Epics by id (a page of todos' targets). */
export const findEpicsByIds = (db: Db, viewer: Viewer | null, ids: readonly number[]): Promise<EpicView[]> =>
  ids.length === 0 ? Promise.resolve([]) : epicsWithAuthor(db, viewer).where('epics.id', 'in', [...ids]).execute();
