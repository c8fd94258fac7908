import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import type { Viewer, Visibility } from '../../domain/access.js';
import { ACCESS, visibleWithoutMembership } from '../../domain/access.js';
import { PRIVATE_FEATURE_MIN_ACCESS_LEVEL } from '../../domain/policy/project.js';
import { authorizedProjects } from '../access.js';
import type { ProjectRow } from './tables.js';

/**
 * Reads of the projects area: single rows, list filters (authorization itself is
 * src/projections/access.ts), and the ProjectsFinder / GroupProjectsFinder selections.
 */

// ───────────────────────────── Queries ─────────────────────────────

/** A project row by id, including one being deleted (commands decide on those). */
export function findProjectRow(db: Db, id: number): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Project#in_fork_network_of?: whether two projects are of one fork network, the projects
 * forked, directly or not, from one root (`forked_from_project_id` followed up from each; a
 * chain is as long as forks of forks go, bounded by the walk's depth).
 */
export async function inForkNetworkOf(db: Db, a: number, b: number): Promise<boolean> {
  const { rows } = await sql<{ root: number }>`
    with recursive up(start, id, depth) as (
      select id, id, 0 from projects where id in (${a}, ${b})
      union all
      select up.start, p.forked_from_project_id, up.depth + 1 from up join projects p on p.id = up.id
       where p.forked_from_project_id is not null and up.depth < 100
    )
    select distinct on (start) id as root from up order by start, depth desc`.execute(db);
  return rows.length === 2 && rows[0]!.root === rows[1]!.root;
}

/** The caller's personal namespace id (GitLab: current_user.namespace_id). */
export async function personalNamespaceId(db: Db, userId: number): Promise<number | undefined> {
  const row = await db.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('owner_id', '=', userId).executeTakeFirst();
  return row?.id;
}

/** GitLab: User#personal_projects_count. */
export async function personalProjectCount(db: Db, namespaceId: number): Promise<number> {
  const row = await db.selectFrom('namespace_project_counts').select('projects').where('namespace_id', '=', namespaceId).executeTakeFirst();
  return row?.projects ?? 0;
}

/** Who holds a claim (another project's stream, or none). */
export async function claimHolder(db: Db, kind: string, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('claims').select('stream_id').where('kind', '=', kind).where('key', '=', key).executeTakeFirst();
  return row?.stream_id;
}

export async function isStarredBy(db: Db, projectId: number, userId: number): Promise<boolean> {
  const row = await db.selectFrom('project_stars').select('user_id').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

/**
 * GitLab: User#owned_projects — the user's personal projects and the projects of groups they
 * own (directly or through an ancestor). Owner (50) on a project comes only from a group
 * membership: a project membership and a share stop at maintainer.
 */
export function ownedBy(viewer: Viewer, alias = 'projects'): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref(`${alias}.namespace_id`)} in (select n.id from namespaces n where n.kind = 'user' and n.owner_id = ${viewer.id})
    or ${authorizedProjects(viewer, ACCESS.OWNER, alias)})`;
}

/**
 * SQL condition: projects the viewer may see (GitLab: Project.public_or_visible_to_user) —
 * open to them by visibility, or authorized at any level (the one model: shares and personal
 * projects included);
 * administrators see everything.
 */
export function projectReadableBy(viewer: Viewer | null, alias = 'projects'): Expression<SqlBool> {
  if (viewer?.isAdmin) return sql<SqlBool>`true`;
  const open = sql<SqlBool>`${sql.ref(`${alias}.visibility`)} in (${sql.join(visibleWithoutMembership(viewer))})`;
  if (!viewer) return open;
  return sql<SqlBool>`(${open} or ${authorizedProjects(viewer, ACCESS.GUEST, alias)})`;
}

/** GitLab's Project.search: fuzzy on path, name and description (words of 3+ characters). */
export function projectSearch(query: string, alias = 'projects'): Expression<SqlBool> | undefined {
  const squished = query.trim().replace(/\s+/g, ' ');
  if (squished === '') return undefined;
  const words = fuzzyWords(squished);
  const escape = (s: string) => s.replace(/[\\%_]/g, '\\$&');
  const column = (name: 'path' | 'name' | 'description') =>
    words.length > 0
      ? sql.join(words.map((w) => sql`${sql.ref(`${alias}.${name}`)} ilike ${`%${escape(w)}%`}`), sql` and `)
      : // GitLab: no word of 3 characters or more — the whole query, case-insensitively, exactly.
        sql`${sql.ref(`${alias}.${name}`)} ilike ${escape(squished)}`;
  return sql<SqlBool>`((${column('path')}) or (${column('name')}) or (${column('description')}))`;
}

/** GitLab's Gitlab::SQL::Pattern#select_fuzzy_words: quoted phrases and words of 3+ characters. */
export function fuzzyWords(query: string): string[] {
  const quoted = [...query.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  let rest = query;
  for (const phrase of quoted) rest = rest.replace(`"${phrase}"`, '');
  return [...rest.split(/\s+/).filter(Boolean), ...quoted].filter((w) => w.length >= 3);
}

/**
 * The projects whose `feature` the viewer may use (GitLab: with_feature_available_for_user):
 * enabled, or private and the viewer a member at the feature's minimum level — the SQL form of
 * the policy's `featureAvailable`; administrators use any feature that is not disabled.
 */
export function featureAvailableTo(viewer: Viewer | null, feature: 'issues' | 'merge_requests' | 'snippets', alias = 'projects'): Expression<SqlBool> {
  const access = sql`${sql.ref(`${alias}.settings`)}->>${`${feature}_access_level`}`;
  if (viewer?.isAdmin) return sql<SqlBool>`coalesce(${access}, 'enabled') <> 'disabled'`;
  const member = viewer ? authorizedProjects(viewer, PRIVATE_FEATURE_MIN_ACCESS_LEVEL[feature], alias) : sql<SqlBool>`false`;
  return sql<SqlBool>`(coalesce(${access}, 'enabled') = 'enabled' or (${access} = 'private' and ${member}))`;
}

export interface ProjectListFilters {
  readonly owned?: boolean | undefined;
  readonly membership?: boolean | undefined;
  readonly starred?: boolean | undefined;
  readonly minAccessLevel?: number | undefined;
  readonly visibility?: Visibility | undefined;
  readonly search?: string | undefined;
  /** true: archived only; false: active only; undefined: both. */
  readonly archived?: boolean | undefined;
  readonly withIssuesEnabled?: boolean | undefined;
  readonly withMergeRequestsEnabled?: boolean | undefined;
  readonly idAfter?: number | undefined;
  readonly idBefore?: number | undefined;
  /** GitLab's PersonalProjectsFinder: only this personal namespace's projects (owned and membership do not apply). */
  readonly personalNamespaceId?: number | undefined;
  /** GitLab's StarredProjectsFinder: only the projects this user starred. */
  readonly starredBy?: number | undefined;
  /** GitLab's ForkProjectsFinder: only the forks of this project. */
  readonly forkedFrom?: number | undefined;
}

/** The filters every project list shares (GitLab's ProjectsFinder#filter_projects). */
function applyFilters<Q extends { where: (...args: any[]) => any }>(query: Q, viewer: Viewer | null, filters: ProjectListFilters): Q {
  let q: any = query;
  if (filters.starred && viewer) q = q.where(sql<SqlBool>`projects.id in (select s.project_id from project_stars s where s.user_id = ${viewer.id})`);
  if (filters.visibility) q = q.where('projects.visibility', '=', filters.visibility);
  const search = filters.search === undefined ? undefined : projectSearch(filters.search);
  if (search) q = q.where(search);
  if (filters.archived !== undefined) q = q.where('projects.archived', '=', filters.archived);
  if (filters.idAfter !== undefined) q = q.where('projects.id', '>', filters.idAfter);
  if (filters.idBefore !== undefined) q = q.where('projects.id', '<', filters.idBefore);
  // GitLab 12's API (Projects#apply_filters, Groups#find_group_projects): issues available to
  // the viewer, but merge requests merely not disabled (with_merge_requests_enabled).
  if (filters.withIssuesEnabled) q = q.where(featureAvailableTo(viewer, 'issues'));
  if (filters.withMergeRequestsEnabled) q = q.where(sql<SqlBool>`coalesce(projects.settings->>'merge_requests_access_level', 'enabled') <> 'disabled'`);
  return q as Q;
}

/** GET /projects (GitLab's ProjectsFinder): the filtered, unordered selection. */
export function projectListQuery(db: Db, viewer: Viewer | null, filters: ProjectListFilters) {
  let query = db.selectFrom('projects').selectAll('projects').where('projects.pending_delete', '=', false);
  if (filters.forkedFrom !== undefined) query = query.where('projects.forked_from_project_id', '=', filters.forkedFrom);
  if (filters.starredBy !== undefined) {
    query = query.where(sql<SqlBool>`projects.id in (select s.project_id from project_stars s where s.user_id = ${filters.starredBy})`);
  }
  if (filters.personalNamespaceId !== undefined) {
    query = query.where('projects.namespace_id', '=', filters.personalNamespaceId);
    if (viewer && filters.minAccessLevel !== undefined) query = query.where(authorizedProjects(viewer, filters.minAccessLevel));
    else query = query.where(projectReadableBy(viewer));
  } else if (!viewer) {
    // GitLab: anonymous callers own nothing and are members of nothing.
    if (filters.owned || filters.membership || filters.minAccessLevel !== undefined) query = query.where(sql<SqlBool>`false`);
    else query = query.where(projectReadableBy(null));
  } else if (filters.owned) query = query.where(ownedBy(viewer));
  else if (filters.minAccessLevel !== undefined) query = query.where(authorizedProjects(viewer, filters.minAccessLevel));
  else if (filters.membership) query = query.where(authorizedProjects(viewer));
  else query = query.where(projectReadableBy(viewer));
  return applyFilters(query, viewer, filters);
}

export interface GroupProjectFilters extends ProjectListFilters {
  readonly withShared: boolean;
  readonly includeSubgroups: boolean;
}

/** GET /groups/:id/projects (GitLab's GroupProjectsFinder): the group's (and shared) projects the viewer may see. */
export function groupProjectsQuery(db: Db, viewer: Viewer | null, groupId: number, filters: GroupProjectFilters) {
  const own = filters.includeSubgroups
    ? sql`select p.id from projects p where p.traversal_ids && array[${groupId}]::integer[]`
    : sql`select p.id from projects p where p.namespace_id = ${groupId}`;
  // An id set rather than `own or exists(shared)`: the OR kept PostgreSQL from using the
  // namespace (or GIN traversal) index and scanned every project (bench: 464 ms → 1 ms).
  const ids = filters.withShared
    ? sql`${own} union all select l.project_id from project_group_links l where l.group_id = ${groupId}`
    : own;
  let query = db
    .selectFrom('projects')
    .selectAll('projects')
    .where('projects.pending_delete', '=', false)
    .where(sql<SqlBool>`projects.id in (${ids})`);
  if (!viewer) query = query.where(projectReadableBy(null));
  else if (filters.minAccessLevel !== undefined) query = query.where(authorizedProjects(viewer, filters.minAccessLevel));
  else query = query.where(projectReadableBy(viewer));
  // GitLab's docs: owned limits to the caller's own projects (GroupProjectsFinder: owner access).
  if (filters.owned) query = viewer ? query.where(ownedBy(viewer)) : query.where(sql<SqlBool>`false`);
  return applyFilters(query, viewer, filters);
}
