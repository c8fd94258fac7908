import { readTogether } from '../../database/read-together.js';
import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { can } from '../../domain/policy/can.js';
import type { DiffEntry } from '../../domain/repository/diffs.js';
import { canAccessBranch } from '../../domain/repository/push-access.js';
import { projectAccessLevel, projectSubjectsOf } from '../access.js';
import type { LabelRow } from '../labels/tables.js';
import type { MilestoneRow } from '../milestones/tables.js';
import { pushAccess } from '../repository/queries.js';
import type { UserRow } from '../users.js';
import type { MergeRequestRow, MergeRequestVersionRow } from './tables.js';
import { userNotesCountsQuery } from '../notes/queries.js';
import { votesQuery } from '../award-emoji/queries.js';

/** The reads the merge request routes run, and what an entity needs besides the row. */

export const findMergeRequest = (db: Db, projectId: number, iid: number): Promise<MergeRequestRow | undefined> =>
  db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();

export const findMergeRequestById = (db: Db, id: number): Promise<MergeRequestRow | undefined> =>
  db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();

export type UserReference = Pick<UserRow, 'id' | 'name' | 'username' | 'state' | 'avatar_url' | 'email'>;

/** A merge request row with what its entity embeds: users, labels, milestone, project path. */
export interface MergeRequestView {
  readonly row: MergeRequestRow;
  readonly pathWithNamespace: string;
  readonly users: ReadonlyMap<number, UserReference>;
  /** The merge request's labels (deleted ones are gone), by title as GitLab sorts them. */
  readonly labels: readonly LabelRow[];
  readonly milestone: MilestoneRow | null;
  /** Its user notes (src/projections/notes/) and thumbsup / thumbsdown awards (src/projections/award-emoji/). */
  readonly userNotesCount: number;
  readonly upvotes: number;
  readonly downvotes: number;
}

/**
 * The views of a page of rows, in at most four queries whatever the page size (users, labels,
 * milestones, project paths), sent together, in the rows' order. A set with nothing in it
 * sends no query (most merge requests have no label and no milestone), nor do the paths of
 * projects the caller already holds (`knownPaths`: a project's list is all that project's).
 */
export async function mergeRequestViews(db: Db, rows: readonly MergeRequestRow[], knownPaths: ReadonlyMap<number, string> = new Map()): Promise<MergeRequestView[]> {
  if (rows.length === 0) return [];
  const userIds = new Set<number>();
  const labelIds = new Set<number>();
  const milestoneIds = new Set<number>();
  const projectIds = new Set<number>();
  for (const row of rows) {
    userIds.add(row.author_id);
    for (const id of row.assignee_ids) userIds.add(id);
    if (row.merged_by_id !== null) userIds.add(row.merged_by_id);
    if (row.closed_by_id !== null) userIds.add(row.closed_by_id);
    for (const id of row.label_ids) labelIds.add(id);
    if (row.milestone_id !== null) milestoneIds.add(row.milestone_id);
    if (!knownPaths.has(row.project_id)) projectIds.add(row.project_id);
  }
  const byIds = (ids: ReadonlySet<number>) => sql<number>`any(${[...ids]}::integer[])`;
  // In one round trip (src/database/read-together.ts); an empty set is no statement.
  const ids = rows.map((row) => row.id);
  const [users, labels, milestones, projects, noteCounts, votes] = await readTogether(db, [
    db.selectFrom('users').select(['id', 'name', 'username', 'state', 'avatar_url', 'email']).where('id', '=', byIds(userIds)).compile(),
    labelIds.size > 0 ? db.selectFrom('labels').selectAll().where('id', '=', byIds(labelIds)).compile() : null,
    milestoneIds.size > 0 ? db.selectFrom('milestones').selectAll().where('id', '=', byIds(milestoneIds)).compile() : null,
    projectIds.size > 0 ? db.selectFrom('projects').select(['id', 'path_with_namespace']).where('id', '=', byIds(projectIds)).compile() : null,
    userNotesCountsQuery(db, 'MergeRequest', ids),
    votesQuery(db, 'MergeRequest', ids),
  ]);
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
}

/**
 * Subscribable#subscribed? for one user over some merge requests, in one query: an explicit
 * subscription, else participation (author, assignees). The ids of those subscribed.
 */
export async function subscribedAmong(db: Db, rows: readonly MergeRequestRow[], userId: number | null): Promise<Set<number>> {
  if (userId === null || rows.length === 0) return new Set();
  const explicit = await db
    .selectFrom('merge_request_subscriptions')
    .select(['merge_request_id', 'subscribed'])
    .where('merge_request_id', 'in', rows.map((r) => r.id))
    .where('user_id', '=', userId)
    .execute();
  const chosen = new Map(explicit.map((s) => [s.merge_request_id, s.subscribed]));
  return new Set(rows.filter((r) => chosen.get(r.id) ?? (r.author_id === userId || r.assignee_ids.includes(userId))).map((r) => r.id));
}

/** The versions of a merge request, newest first (GitLab's merge_request_diffs order). */
export const versionsOf = (db: Db, mergeRequestId: number): Promise<MergeRequestVersionRow[]> =>
  db.selectFrom('merge_request_versions').selectAll().where('merge_request_id', '=', mergeRequestId).orderBy('id', 'desc').execute();

/** One version of a merge request (`merge_request.merge_request_diffs.find(id)`): another merge request's is none. */
export const findVersion = (db: Db, mergeRequestId: number, versionId: number): Promise<MergeRequestVersionRow | undefined> =>
  db.selectFrom('merge_request_versions').selectAll().where('merge_request_id', '=', mergeRequestId).where('id', '=', versionId).executeTakeFirst();

/** The files of a version's diff as it was taken (`merge_request_diff_files`); none for a version taken before they were stored. */
export async function versionFiles(db: Db, versionId: number): Promise<DiffEntry[] | undefined> {
  const row = await db.selectFrom('merge_request_version_diffs').select('files').where('version_id', '=', versionId).executeTakeFirst();
  return row?.files;
}

/**
 * The users among `userIds` who may read the project's merge requests (ProjectPolicy
 * read_merge_request; a blocked user may do nothing): whom IssuableBaseService#filter_assignee
 * keeps as assignees and TodoService makes todos for. Empty for a project pending deletion.
 */
export async function mergeRequestReaders(db: Db, projectId: number, userIds: readonly number[], today: string): Promise<Set<number>> {
  const subjects = await projectSubjectsOf(db, projectId, userIds, today);
  return new Set(subjects.filter((s) => can(s, 'read_merge_request')).map((s) => s.viewer!.id));
}

/**
 * The merge requests among `rows` the viewer may merge: MergeRequest#can_be_merged_by? (GitLab
 * 12), Gitlab::UserAccess#can_update_branch?(target_branch) — push or merge access to the target
 * branch over the project's protected branches (push_code when none matches); none for an
 * anonymous caller (`can_access_git?`). Entities::MergeRequest shows it as `user.can_merge`.
 */
export async function mergeableBy(db: Db, viewer: Viewer | null, rows: readonly MergeRequestRow[]): Promise<Set<number>> {
  const mergeable = new Set<number>();
  if (!viewer || rows.length === 0) return mergeable;
  const projects = await db
    .selectFrom('projects')
    .selectAll()
    .select(projectAccessLevel(viewer, sql.ref('projects.id')).as('access_level'))
    .select(sql<number | null>`(select n.owner_id from namespaces n where n.id = projects.namespace_id and n.kind = 'user')`.as('personal_owner_id'))
    .where('id', 'in', [...new Set(rows.map((r) => r.project_id))])
    .execute();
  for (const { access_level: role, personal_owner_id: personalOwnerId, ...project } of projects) {
    const canPushCode = can({ kind: 'project', viewer, role, project, personalOwnerId }, 'push_code');
    const { refs, who } = await pushAccess(db, project.id, { userId: viewer.id, isAdmin: viewer.isAdmin, role, canPushCode });
    for (const row of rows) {
      if (row.project_id !== project.id) continue;
      if (canAccessBranch('push', row.target_branch, refs, who) || canAccessBranch('merge', row.target_branch, refs, who)) mergeable.add(row.id);
    }
  }
  return mergeable;
}
