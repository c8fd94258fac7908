import { sql, type Expression, type SqlBool } from 'kysely';
import { fuzzyWords } from './projects/queries.js';

/**
 * What GitLab's IssuableFinder filters the same way for issues and merge requests: the
 * search (`search` with `in`), the milestone and the labels, each a condition on the
 * issuable's table (`issues` or `merge_requests`).
 */

export type IssuableTable = 'issues' | 'merge_requests';

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
