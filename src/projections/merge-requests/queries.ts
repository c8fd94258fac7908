import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { can } from '../../domain/policy/can.js';
import type { ProjectSubject } from '../../domain/policy/project.js';
import type { DiffEntry } from '../../domain/repository/diffs.js';
import { canAccessBranch, type ProtectedRef } from '../../domain/repository/push-access.js';
import { projectAccessLevel, projectSubjectsOf } from '../access.js';
import { commitRows, pushAccess } from '../repository/queries.js';
import type { MergeRequestRow, MergeRequestVersionRow } from './tables.js';
import { issuableViewReads, issuableViews, type IssuableView } from '../issuable-views.js';

/** The reads the merge request routes run, and what an entity needs besides the row. */

export const findMergeRequest = async (db: Db, projectId: number, iid: number): Promise<MergeRequestRow | undefined> =>
  (await db.executeQuery(mergeRequestQuery(db, projectId, iid))).rows[0];

/** findMergeRequest's query, to send with other reads (readTogether). */
export const mergeRequestQuery = (db: Db, projectId: number, iid: number) =>
  db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).compile();

export const findMergeRequestById = (db: Db, id: number): Promise<MergeRequestRow | undefined> =>
  db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();

export type { UserReference } from '../issuable-views.js';

/** A merge request row with what its entity embeds (src/projections/issuable-views.ts). */
export type MergeRequestView = IssuableView<MergeRequestRow>;

/** The views of a page of merge requests, in one round trip (their mergers among the users). */
export const mergeRequestViews = (db: Db, rows: readonly MergeRequestRow[], knownPaths?: ReadonlyMap<number, string>): Promise<MergeRequestView[]> =>
  issuableViews(db, 'MergeRequest', rows, knownPaths, mergedBy);

/** mergeRequestViews' queries, to send with other reads (issuableViewReads). */
export const mergeRequestViewReads = (db: Db, rows: readonly MergeRequestRow[], knownPaths?: ReadonlyMap<number, string>) => issuableViewReads(db, 'MergeRequest', rows, knownPaths, mergedBy);

const mergedBy = (row: MergeRequestRow) => row.merged_by_id;

/**
 * Subscribable#subscribed? for one user over some merge requests, in one query: an explicit
 * subscription, else participation (author, assignees). The ids of those subscribed.
 */
export async function subscribedAmong(db: Db, rows: readonly MergeRequestRow[], userId: number | null): Promise<Set<number>> {
  if (userId === null || rows.length === 0) return new Set();
  return subscribedIn(rows, userId, (await db.executeQuery(subscriptionsQuery(db, rows, userId))).rows);
}

/** subscribedAmong's query, to send with other reads (readTogether); `subscribedIn` answers from its rows. */
export const subscriptionsQuery = (db: Db, rows: readonly MergeRequestRow[], userId: number) =>
  db
    .selectFrom('merge_request_subscriptions')
    .select(['merge_request_id', 'subscribed'])
    .where('merge_request_id', 'in', rows.map((r) => r.id))
    .where('user_id', '=', userId)
    .compile();

export function subscribedIn(rows: readonly MergeRequestRow[], userId: number, explicit: readonly { merge_request_id: number; subscribed: boolean }[]): Set<number> {
  const chosen = new Map(explicit.map((s) => [s.merge_request_id, s.subscribed]));
  return new Set(rows.filter((r) => chosen.get(r.id) ?? (r.author_id === userId || r.assignee_ids.includes(userId))).map((r) => r.id));
}

/** The versions of a merge request, newest first (GitLab's merge_request_diffs order). */
export const versionsOf = (db: Db, mergeRequestId: number): Promise<MergeRequestVersionRow[]> =>
  db.selectFrom('merge_request_versions').selectAll().where('merge_request_id', '=', mergeRequestId).orderBy('id', 'desc').execute();

/** The files of a version's diff as it was taken (`merge_request_diff_files`); none for a version taken before they were stored. */
export async function versionFiles(db: Db, versionId: number): Promise<DiffEntry[] | undefined> {
  const [row] = (await db.executeQuery(versionFilesQuery(db, versionId))).rows;
  return row ? (JSON.parse(row.files_json) as DiffEntry[]) : undefined;
}

/**
 * A version's files as the JSON text they were stored as (`files_json`): JSON.stringify of
 * the DiffEntry objects, whose members are Entities::Diff's in its order, so that an answer
 * splices the text in unparsed (src/http/kernel/json.ts). Its one row, or none; to send with
 * other reads.
 */
export const versionFilesQuery = (db: Db, versionId: number) =>
  db.selectFrom('merge_request_version_diffs').select(FILES_JSON).where('version_id', '=', versionId).compile();

/** The files of the latest version of the merge request `iid` names (`merge_request.merge_request_diff`), as versionFilesQuery. */
export const latestVersionFilesQuery = (db: Db, projectId: number, iid: number) =>
  db
    .selectFrom('merge_request_version_diffs')
    .select(FILES_JSON)
    .where('version_id', '=', (eb) => eb.selectFrom('merge_requests').select('latest_version_id').where('project_id', '=', projectId).where('iid', '=', iid))
    .compile();

/** The `json` column as its text: the driver would parse it. */
const FILES_JSON = sql<string>`files::text`.as('files_json');

/**
 * One version of the merge request `iid` names (`merge_request.merge_request_diffs.find(id)`:
 * another merge request's is none), by default its latest, to send with other reads.
 */
export const versionOfIidQuery = (db: Db, projectId: number, iid: number, versionId?: number) =>
  db
    .selectFrom('merge_request_versions as v')
    .innerJoin('merge_requests as m', 'm.id', 'v.merge_request_id')
    .selectAll('v')
    .where('m.project_id', '=', projectId)
    .where('m.iid', '=', iid)
    .where((eb) => (versionId === undefined ? eb('v.id', '=', eb.ref('m.latest_version_id')) : eb('v.id', '=', versionId)))
    .compile();

/**
 * The stored commit rows of a version's commits (`commit_shas`) in the project's repository, in no
 * order, to send with other reads; commitsIn (src/projections/repository/queries.ts) orders and
 * parses them.
 */
export const versionCommitRowsQuery = (db: Db, projectId: number, versionId: number) =>
  commitRows(db, projectId)
    .where(sql<boolean>`sha in (select unnest(commit_shas) from merge_request_versions where id = ${versionId})`)
    .compile();

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
    for (const id of await mergeableIn(db, project.id, { kind: 'project', viewer, role, project, personalOwnerId }, rows)) mergeable.add(id);
  }
  return mergeable;
}

/**
 * mergeableBy among the rows of one project, as its subject (a route's project scope) has it;
 * `refs`: the project's protection rules when the caller has read them (protectedRefsQuery).
 */
export async function mergeableIn(db: Db, projectId: number, subject: ProjectSubject, rows: readonly MergeRequestRow[], refs?: readonly ProtectedRef[]): Promise<Set<number>> {
  const { viewer, role } = subject;
  const mergeable = new Set<number>();
  if (!viewer) return mergeable;
  const { refs: rules, who } = await pushAccess(db, projectId, { userId: viewer.id, isAdmin: viewer.isAdmin, role, canPushCode: can(subject, 'push_code') }, refs);
  for (const row of rows) {
    if (row.project_id !== projectId) continue;
    if (canAccessBranch('push', row.target_branch, rules, who) || canAccessBranch('merge', row.target_branch, rules, who)) mergeable.add(row.id);
  }
  return mergeable;
}
