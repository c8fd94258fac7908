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

// ───────────────────────────── Epic issues ─────────────────────────────

/** What an issue shows of its epic (EpicBaseEntity): the epic and its group's path. */
export interface EpicOfIssue {
  readonly id: number;
  readonly iid: number;
  readonly title: string;
  readonly group_id: number;
  readonly group_full_path: string;
  readonly start_date: string | null;
  readonly due_date: string | null;
}

/**
 * EE's Issue entity shows `epic_iid` and `epic` when the viewer may read epics of the issue's
 * project's group (`Ability.allowed?(user, :read_epic, issue.project&.group)`, GitLab 12.10):
 * for each such issue of `rows`, its epic or null; issues of other projects are left out.
 */
export async function epicsOfIssues(db: Db, viewer: Viewer | null, rows: readonly { id: number; project_id: number }[]): Promise<Map<number, EpicOfIssue | null>> {
  const shown = new Map<number, EpicOfIssue | null>();
  if (rows.length === 0) return shown;
  const readable = await db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select('projects.id')
    .where('projects.id', 'in', [...new Set(rows.map((r) => r.project_id))])
    .where('namespaces.kind', '=', 'group')
    .where(groupReadableBy(viewer))
    .execute();
  const projects = new Set(readable.map((p) => p.id));
  const issueIds = rows.filter((r) => projects.has(r.project_id)).map((r) => r.id);
  if (issueIds.length === 0) return shown;
  const epics = await db
    .selectFrom('epic_issues as ei')
    .innerJoin('epics as e', 'e.id', 'ei.epic_id')
    .innerJoin('namespaces as g', 'g.id', 'e.group_id')
    .select(['ei.issue_id', 'e.id', 'e.iid', 'e.title', 'e.group_id', 'g.full_path as group_full_path', 'e.start_date', 'e.due_date'])
    .where('ei.issue_id', 'in', issueIds)
    .execute();
  const byIssue = new Map(epics.map(({ issue_id, ...epic }) => [issue_id, epic]));
  for (const id of issueIds) shown.set(id, byIssue.get(id) ?? null);
  return shown;
}

/**
 * Epic#issues_readable_by before the readers' filter: the epic's issues with their link's id
 * and position, ordered by `epic_issues.relative_position, epic_issues.id`.
 */
export async function issuesOfEpic(db: Db, epicId: number) {
  return db
    .selectFrom('epic_issues as ei')
    .innerJoin('issues', 'issues.id', 'ei.issue_id')
    .selectAll('issues')
    .select(['ei.id as epic_issue_id', 'ei.relative_position as epic_relative_position'])
    .where('ei.epic_id', '=', epicId)
    .orderBy('ei.relative_position')
    .orderBy('ei.id')
    .execute();
}

/** `epic.epic_issues.find(id)`: a link of the epic. */
export const findEpicIssue = (db: Db, epicId: number, id: number) =>
  db.selectFrom('epic_issues').selectAll().where('epic_id', '=', epicId).where('id', '=', id).executeTakeFirst();

/** A project's group (its namespace when that is a group), with its ancestors' ids. */
export const projectGroup = (db: Db, projectId: number) =>
  db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select(['namespaces.id', 'namespaces.traversal_ids'])
    .where('projects.id', '=', projectId)
    .where('namespaces.kind', '=', 'group')
    .executeTakeFirst();

/**
 * EpicsFinder over a group for an issue's `epic_id` / `epic_iid` (EE, 12.10): by id among the
 * readable epics of the group, its subgroups and (`include_ancestor_groups`) its ancestors; by
 * iid in the group itself (the finder looks no further for iids, which subgroups repeat).
 */
export function findEpicForIssue(db: Db, viewer: Viewer | null, group: { id: number; traversal_ids: number[] }, by: { id: number } | { iid: number }): Promise<EpicView | undefined> {
  const filters: EpicFilters = { state: 'all', includeAncestorGroups: 'id' in by, includeDescendantGroups: 'id' in by };
  const query = epicsQuery(db, viewer, group, filters);
  return ('id' in by ? query.where('epics.id', '=', by.id) : query.where('epics.iid', '=', by.iid).where('epics.group_id', '=', group.id)).executeTakeFirst();
}
