import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { readTogether } from '../database/read-together.js';
import { votesQuery } from './award-emoji/queries.js';
import type { LabelRow } from './labels/tables.js';
import type { MilestoneRow } from './milestones/tables.js';
import { userNotesCountsQuery } from './notes/queries.js';
import type { UserRow } from './users.js';

/** What an issue's or a merge request's entity embeds besides its row, read for a whole page at once. */

export type UserReference = Pick<UserRow, 'id' | 'name' | 'username' | 'state' | 'avatar_url' | 'email'>;

/** The columns of an issuable's row the views read. */
export interface IssuableViewRow {
  readonly id: number;
  readonly project_id: number;
  readonly author_id: number;
  readonly assignee_ids: readonly number[];
  readonly closed_by_id: number | null;
  readonly label_ids: readonly number[];
  readonly milestone_id: number | null;
}

/** A row with what its entity embeds: users, labels, milestone, project path, note and vote counts. */
export interface IssuableView<Row extends IssuableViewRow> {
  readonly row: Row;
  readonly pathWithNamespace: string;
  readonly users: ReadonlyMap<number, UserReference>;
  /** Its labels (deleted ones are gone), by title as GitLab sorts them. */
  readonly labels: readonly LabelRow[];
  readonly milestone: MilestoneRow | null;
  /** Its user notes (src/projections/notes/) and thumbsup / thumbsdown awards (src/projections/award-emoji/). */
  readonly userNotesCount: number;
  readonly upvotes: number;
  readonly downvotes: number;
}

/**
 * The views of a page of rows, in at most six queries whatever the page size (users, labels,
 * milestones, project paths, note counts, votes), sent together in one round trip, in the
 * rows' order. A set with nothing in it sends no query (most issuables have no label and no
 * milestone), nor do the paths of projects the caller already holds (`knownPaths`: a
 * project's list is all that project's). `moreUsers` names a row's other users (a merge
 * request's merger).
 */
export async function issuableViews<Row extends IssuableViewRow>(
  db: Db,
  type: 'Issue' | 'MergeRequest',
  rows: readonly Row[],
  knownPaths: ReadonlyMap<number, string> = new Map(),
  moreUsers: (row: Row) => number | null = () => null,
): Promise<IssuableView<Row>[]> {
  if (rows.length === 0) return [];
  const reads = issuableViewReads(db, type, rows, knownPaths, moreUsers);
  return reads.views(await readTogether(db, reads.queries));
}

/**
 * issuableViews' queries (`null`: a read that finds nothing, not sent), for a caller that
 * sends them together with reads of its own (readTogether), and the views of their rows.
 */
export function issuableViewReads<Row extends IssuableViewRow>(
  db: Db,
  type: 'Issue' | 'MergeRequest',
  rows: readonly Row[],
  knownPaths: ReadonlyMap<number, string> = new Map(),
  moreUsers: (row: Row) => number | null = () => null,
) {
  const userIds = new Set<number>();
  const labelIds = new Set<number>();
  const milestoneIds = new Set<number>();
  const projectIds = new Set<number>();
  for (const row of rows) {
    userIds.add(row.author_id);
    for (const id of row.assignee_ids) userIds.add(id);
    if (row.closed_by_id !== null) userIds.add(row.closed_by_id);
    const more = moreUsers(row);
    if (more !== null) userIds.add(more);
    for (const id of row.label_ids) labelIds.add(id);
    if (row.milestone_id !== null) milestoneIds.add(row.milestone_id);
    if (!knownPaths.has(row.project_id)) projectIds.add(row.project_id);
  }
  const byIds = (ids: ReadonlySet<number>) => sql<number>`any(${[...ids]}::integer[])`;
  const ids = rows.map((row) => row.id);
  const queries = [
    db.selectFrom('users').select(['id', 'name', 'username', 'state', 'avatar_url', 'email']).where('id', '=', byIds(userIds)).compile(),
    labelIds.size > 0 ? db.selectFrom('labels').selectAll().where('id', '=', byIds(labelIds)).compile() : null,
    milestoneIds.size > 0 ? db.selectFrom('milestones').selectAll().where('id', '=', byIds(milestoneIds)).compile() : null,
    projectIds.size > 0 ? db.selectFrom('projects').select(['id', 'path_with_namespace']).where('id', '=', byIds(projectIds)).compile() : null,
    userNotesCountsQuery(db, type, ids),
    votesQuery(db, type, ids),
  ] as const;
  const views = ([users, labels, milestones, projects, noteCounts, votes]: Awaited<ReturnType<typeof readTogether<typeof queries>>>): IssuableView<Row>[] => {
    const noteCountMap = new Map(noteCounts.map((n) => [n.noteable_id, n.user_notes_count]));
    const voteMap = new Map(votes.map((v) => [Number(v.awardable_id), v]));
    const userMap = new Map(users.map((u) => [u.id, u]));
    const labelMap = new Map(labels.map((l) => [l.id, l]));
    const milestoneMap = new Map(milestones.map((m) => [m.id, m]));
    const pathMap = new Map([...knownPaths, ...projects.map((p): [number, string] => [p.id, p.path_with_namespace])]);
    return rows.map((row) => ({
      row,
      pathWithNamespace: pathMap.get(row.project_id) ?? '',
      users: userMap,
      labels: row.label_ids
        .map((id) => labelMap.get(id))
        .filter((l): l is LabelRow => l !== undefined)
        .sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0)),
      milestone: row.milestone_id === null ? null : (milestoneMap.get(row.milestone_id) ?? null),
      userNotesCount: noteCountMap.get(row.id) ?? 0,
      upvotes: Number(voteMap.get(row.id)?.upvotes ?? 0),
      downvotes: Number(voteMap.get(row.id)?.downvotes ?? 0),
    }));
  };
  return { queries, views };
}
