import { sql, type Expression, type SqlBool } from 'kysely';
import type { Viewer } from '../domain/access.js';
import { fuzzyWords } from './projects/queries.js';

/**
 * What GitLab's IssuableFinder filters the same way for issues and merge requests: the
 * scope, the state, the author, the assignee, the dates, the iids, the caller's award emoji,
 * the search (`search` with `in`), the milestone and the labels, each a condition on the
 * issuable's table (`issues` or `merge_requests`).
 */

export type IssuableTable = 'issues' | 'merge_requests';

/** IssuableFinder's FILTER_NONE / FILTER_ANY, compared lowercased as GitLab does. */
export type NoneOrAny = 'none' | 'any';

/** The filters both finders read the same way, in IssuableFinder#filter_items' order. */
export interface IssuableFilters {
  /** Underscored (`created-by-me` arrives as `created_by_me`); undefined is `all`. */
  readonly scope?: 'created_by_me' | 'assigned_to_me' | 'all' | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly updatedAfter?: Date | undefined;
  readonly updatedBefore?: Date | undefined;
  /** `all` is no condition. */
  readonly state: string;
  readonly assigneeId?: number | NoneOrAny | undefined;
  readonly authorId?: number | undefined;
  readonly iids?: readonly number[] | undefined;
  readonly myReactionEmoji?: string | undefined;
}

const AWARDABLE_TYPE = { issues: 'Issue', merge_requests: 'MergeRequest' } as const;

/** Awardable.awarded / not_awarded: the viewer's award emoji on the issuable (of one name when given). */
function awardedBy(table: IssuableTable, viewer: Viewer, name?: string): Expression<SqlBool> {
  const named = name === undefined ? sql`` : sql` and a.name = ${name}`;
  return sql<SqlBool>`exists (select 1 from award_emoji a where a.user_id = ${viewer.id} and a.awardable_type = ${AWARDABLE_TYPE[table]}
    and a.awardable_id = ${sql.ref(`${table}.id`)}${named})`;
}

/**
 * IssuableFinder#by_scope, by_created_at, by_updated_at, by_state, by_assignee (`assignee_id`),
 * by_author (`author_id`), by_iids and by_my_reaction_emoji.
 */
export function issuableConditions(table: IssuableTable, viewer: Viewer | null, f: IssuableFilters): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  const column = (name: string) => sql.ref(`${table}.${name}`);
  // by_scope: the caller's own, or those assigned to them; nothing for an anonymous caller.
  if (f.scope === 'created_by_me') where.push(viewer ? sql<SqlBool>`${column('author_id')} = ${viewer.id}` : sql<SqlBool>`false`);
  if (f.scope === 'assigned_to_me') where.push(viewer ? sql<SqlBool>`${column('assignee_ids')} @> array[${viewer.id}]::integer[]` : sql<SqlBool>`false`);
  if (f.createdAfter) where.push(sql<SqlBool>`${column('created_at')} >= ${f.createdAfter.toISOString()}::timestamptz`);
  if (f.createdBefore) where.push(sql<SqlBool>`${column('created_at')} <= ${f.createdBefore.toISOString()}::timestamptz`);
  if (f.updatedAfter) where.push(sql<SqlBool>`${column('updated_at')} >= ${f.updatedAfter.toISOString()}::timestamptz`);
  if (f.updatedBefore) where.push(sql<SqlBool>`${column('updated_at')} <= ${f.updatedBefore.toISOString()}::timestamptz`);
  if (f.state !== 'all') where.push(sql<SqlBool>`${column('state')} = ${f.state}`);
  if (f.assigneeId === 'none') where.push(sql<SqlBool>`cardinality(${column('assignee_ids')}) = 0`);
  else if (f.assigneeId === 'any') where.push(sql<SqlBool>`cardinality(${column('assignee_ids')}) > 0`);
  else if (f.assigneeId !== undefined) where.push(sql<SqlBool>`${column('assignee_ids')} @> array[${f.assigneeId}]::integer[]`);
  if (f.authorId !== undefined) where.push(sql<SqlBool>`${column('author_id')} = ${f.authorId}`);
  if (f.iids && f.iids.length > 0) where.push(sql<SqlBool>`${column('iid')} = any(${[...f.iids]}::integer[])`);
  // by_my_reaction_emoji, for a signed-in caller (`params[:my_reaction_emoji] && current_user`: an
  // empty name is Ruby-truthy, so it asks for any award): None, Any, or one name.
  if (viewer && f.myReactionEmoji !== undefined) {
    const emoji = f.myReactionEmoji.toLowerCase();
    if (emoji === 'none') where.push(sql<SqlBool>`not ${awardedBy(table, viewer)}`);
    else if (emoji === 'any' || f.myReactionEmoji === '') where.push(awardedBy(table, viewer));
    else where.push(awardedBy(table, viewer, f.myReactionEmoji));
  }
  return where;
}

/** Gitlab::SQL::Pattern#fuzzy_arel_match on one column: every word of 3+ characters, else the whole query case-insensitively. */
function fuzzyMatch(table: IssuableTable, column: 'title' | 'description', query: string): Expression<SqlBool> {
  const words = fuzzyWords(query);
  const escape = (s: string) => s.replace(/[\\%_]/g, '\\$&');
  const ref = sql.ref(`${table}.${column}`);
  if (words.length === 0) return sql<SqlBool>`${ref} ilike ${escape(query)}`;
  return sql<SqlBool>`(${sql.join(
    words.map((word) => sql`${ref} ilike ${`%${escape(word)}%`}`),
    sql` and `,
  )})`;
}

/** Issuable.full_search: the `in` columns (title, description; both when none is named). */
export function fullSearch(table: IssuableTable, search: string, matchedColumns: string | undefined): Expression<SqlBool> | undefined {
  const query = search.trim().replace(/\s+/g, ' ');
  if (query === '') return undefined;
  const asked = (matchedColumns ?? '').split(',').filter((c): c is 'title' | 'description' => c === 'title' || c === 'description');
  const columns = asked.length > 0 ? [...new Set(asked)] : (['title', 'description'] as const);
  return sql<SqlBool>`(${sql.join(
    columns.map((column) => fuzzyMatch(table, column, query)),
    sql` or `,
  )})`;
}

/** The issuable's highest-priority label's priority (the lowest number), null without one: Issuable.order_labels_priority's key. */
export const lowestLabelPriority = (table: IssuableTable) =>
  sql`(select min(l.priority) from labels l where l.id = any(${sql.ref(`${table}.label_ids`)}) and l.priority is not null)`;

/** IssuableFinder#by_milestone: none, any, upcoming, started or a title. A deleted milestone's id counts as none. */
export function milestoneCondition(table: IssuableTable, milestone: string): Expression<SqlBool> {
  const lower = milestone.toLowerCase();
  const column = sql.ref(`${table}.milestone_id`);
  const existing = sql`exists (select 1 from milestones m where m.id = ${column})`;
  if (lower === 'none' || milestone === 'No Milestone') return sql<SqlBool>`(${column} is null or not ${existing})`;
  if (lower === 'any' || milestone === 'Any Milestone') return sql<SqlBool>`(${column} is not null and ${existing})`;
  if (milestone === '#upcoming' || lower === 'upcoming') {
    // Milestone.upcoming_ids: per project, the active milestones due soonest in the future.
    return sql<SqlBool>`${column} in (select m.id from milestones m
      join (select project_id, min(due_date) as due from milestones where state = 'active' and due_date > current_date::text group by project_id) u
        on u.project_id = m.project_id and u.due = m.due_date
      where m.state = 'active')`;
  }
  if (milestone === '#started' || lower === 'started') {
    return sql<SqlBool>`${column} in (select m.id from milestones m where m.state = 'active' and m.start_date <= current_date::text)`;
  }
  return sql<SqlBool>`${column} in (select m.id from milestones m where m.title = ${milestone})`;
}

/** IssuableFinder#by_label: none, any, or every title present (labels of `projectId`, or any project's). A deleted label no longer counts. */
export function labelCondition(table: IssuableTable, labels: readonly string[], projectId?: number): Expression<SqlBool> | undefined {
  if (labels.length === 0) return undefined;
  const lower = labels.map((l) => l.toLowerCase());
  const column = sql.ref(`${table}.label_ids`);
  const existing = sql`exists (select 1 from labels l where l.id = any(${column}))`;
  if (lower.includes('none') || lower.includes('no label')) return sql<SqlBool>`(cardinality(${column}) = 0 or not ${existing})`;
  if (lower.includes('any')) return sql<SqlBool>`(cardinality(${column}) > 0 and ${existing})`;
  const titled = (title: string) =>
    projectId !== undefined
      ? sql`array(select l.id from labels l where l.project_id = ${projectId} and l.title = ${title})`
      : sql`array(select l.id from labels l where l.title = ${title})`;
  return sql<SqlBool>`(${sql.join(
    [...new Set(labels)].map((title) => sql`${column} && ${titled(title)}`),
    sql` and `,
  )})`;
}

/** IssuableFinder#by_negated_label (`without_particular_labels`): none of the titled labels, whichever project's. */
export function withoutLabelsCondition(table: IssuableTable, labels: readonly string[]): Expression<SqlBool> | undefined {
  if (labels.length === 0) return undefined;
  return sql<SqlBool>`not (${sql.ref(`${table}.label_ids`)} && array(select l.id from labels l where l.title = any(${[...new Set(labels)]}::text[])))`;
}
