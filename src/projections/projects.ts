import { sql, type ColumnType, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { Db } from '../database.js';
import type { Viewer, Visibility } from '../domain/access.js';
import { ACCESS, visibleWithoutMembership } from '../domain/access.js';
import { PROJECT_EVENT_TYPES, type ProjectChanges, type ProjectEvent, type ProjectSettings, settingsOf } from '../domain/projects.js';
import type { StoredEvent } from '../eventstore/types.js';
import type { NamespaceRow } from './namespaces.js';
import type { Projector } from './projector.js';
import type { UserRow } from './users.js';

// ───────────────────────────── Tables ─────────────────────────────

type Timestamp = ColumnType<Date, string, string>;

/** Projects; `traversal_ids` are the namespace's (root → the project's namespace). */
export interface ProjectsTable {
  id: number;
  namespace_id: number;
  creator_id: number | null;
  name: string;
  path: string;
  name_with_namespace: string;
  path_with_namespace: string;
  description: string | null;
  default_branch: string | null;
  visibility: Visibility;
  archived: boolean;
  tag_list: string[];
  issues_enabled: boolean;
  merge_requests_enabled: boolean;
  wiki_enabled: boolean;
  jobs_enabled: boolean;
  snippets_enabled: boolean;
  container_registry_enabled: boolean;
  shared_runners_enabled: boolean;
  lfs_enabled: boolean;
  public_jobs: boolean;
  request_access_enabled: boolean;
  star_count: number;
  forks_count: number;
  open_issues_count: number;
  avatar_url: string | null;
  traversal_ids: number[];
  /** GitLab's long tail of project settings, named as in its JSON (see ProjectSettingsColumn). */
  settings: ColumnType<ProjectSettingsColumn, string, string>;
  pending_delete: boolean;
  created_at: Timestamp;
  last_activity_at: Timestamp;
  updated_at: Timestamp;
  stream_version: number;
}

/** What `projects.settings` holds: the settings without a column of their own, and the README flag. */
export type ProjectSettingsColumn = Omit<ProjectSettings, (typeof COLUMN_SETTINGS)[number]> & { readonly readme: boolean };

export interface ProjectStarsTable {
  project_id: number;
  user_id: number;
  created_at: Timestamp;
}

/** Projects shared with groups (`shared_with_groups`, a group's `shared_projects`). */
export interface ProjectGroupLinksTable {
  project_id: number;
  group_id: number;
  group_access: number;
  expires_at: string | null;
  created_at: Timestamp;
}

export interface ProjectsReadTables {
  projects: ProjectsTable;
  project_stars: ProjectStarsTable;
  project_group_links: ProjectGroupLinksTable;
}

export type ProjectRow = Selectable<ProjectsTable>;

// ───────────────────────────── Projector ─────────────────────────────

/** Settings stored in columns of their own (the rest go to `settings`). */
const COLUMN_SETTINGS = [
  'name', 'path', 'description', 'visibility', 'tag_list', 'container_registry_enabled', 'shared_runners_enabled', 'lfs_enabled',
  'public_jobs', 'request_access_enabled',
] as const;

/** A feature flag column: on unless its access level is `disabled`. */
const FEATURE_COLUMNS = {
  issues_access_level: 'issues_enabled',
  merge_requests_access_level: 'merge_requests_enabled',
  wiki_access_level: 'wiki_enabled',
  builds_access_level: 'jobs_enabled',
  snippets_access_level: 'snippets_enabled',
} as const;

/** Splits settings (or changes) into column values and the `settings` JSON part. */
function splitSettings(settings: Partial<ProjectSettings>): { columns: Record<string, unknown>; rest: Record<string, unknown> } {
  const columns: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    if ((COLUMN_SETTINGS as readonly string[]).includes(key)) columns[key] = key === 'tag_list' ? [...(value as string[])] : value;
    else rest[key] = value;
    const flag = FEATURE_COLUMNS[key as keyof typeof FEATURE_COLUMNS];
    if (flag) columns[flag] = value !== 'disabled';
  }
  return { columns, rest };
}

/** Events of other areas that move projects' paths or hide them (handled by name). */
const FOREIGN_EVENT_TYPES = ['GroupUpdated', 'GroupDeletionScheduled', 'UserProfileUpdated', 'UserDeleted'] as const;

type ForeignEvent =
  | { readonly type: 'GroupUpdated'; readonly data: { readonly id: number; readonly changes: { readonly name?: string; readonly path?: string } } }
  | { readonly type: 'GroupDeletionScheduled'; readonly data: { readonly id: number } }
  | { readonly type: 'UserProfileUpdated'; readonly data: { readonly id: number; readonly changes: { readonly name?: string; readonly username?: string } } }
  | { readonly type: 'UserDeleted'; readonly data: { readonly id: number } };

/**
 * Inline: the projects API reads what it just wrote. A project's row is guarded by its
 * stream version; what comes from namespaces (paths and names with the namespace, hiding a
 * removed owner's projects) is recomputed from the namespace rows, so replays change nothing.
 * Runs after the namespaces projector (registry order): renames read the renamed rows.
 */
export const projectsProjector: Projector = {
  name: 'projects',
  version: 1,
  mode: 'inline',
  handles: [...PROJECT_EVENT_TYPES, ...FOREIGN_EVENT_TYPES],
  tables: ['projects', 'project_stars', 'project_group_links'],
  async apply(stored: StoredEvent, trx: Db) {
    const event = stored as unknown as (ProjectEvent | ForeignEvent) & StoredEvent;
    const at = stored.occurredAt.toISOString();
    const v = stored.streamVersion;
    /** Moves a project row to this event's version; false when the event was applied already. */
    const advance = async (id: number, values: Record<string, unknown> = {}) => {
      const result = await trx
        .updateTable('projects')
        .set({ ...values, stream_version: v })
        .where('id', '=', id)
        .where('stream_version', '<', v)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    };
    switch (event.type) {
      case 'ProjectCreated': {
        const d = event.data;
        const { columns, rest } = splitSettings(settingsOf(d));
        // The namespace row, locked: a concurrent rename either finished before (we see its new
        // path) or waits for this transaction (its cascade then sees this project).
        const { rows } = await sql<Pick<NamespaceRow, 'traversal_ids' | 'full_path' | 'full_name'>>`
          select traversal_ids, full_path, full_name from namespaces where id = ${d.namespace_id} for update`.execute(trx);
        const ns = rows[0];
        await trx
          .insertInto('projects')
          .values({
            ...(columns as Pick<ProjectsTable, (typeof COLUMN_SETTINGS)[number]>),
            issues_enabled: d.issues_access_level !== 'disabled',
            merge_requests_enabled: d.merge_requests_access_level !== 'disabled',
            wiki_enabled: d.wiki_access_level !== 'disabled',
            jobs_enabled: d.builds_access_level !== 'disabled',
            snippets_enabled: d.snippets_access_level !== 'disabled',
            id: d.id,
            namespace_id: d.namespace_id,
            creator_id: d.creator_id,
            path_with_namespace: ns ? `${ns.full_path}/${d.path}` : d.path_with_namespace,
            name_with_namespace: ns ? `${ns.full_name} / ${d.name}` : d.name_with_namespace,
            traversal_ids: ns ? ns.traversal_ids : [...d.traversal_ids],
            default_branch: d.default_branch,
            archived: false,
            star_count: 0,
            forks_count: 0,
            open_issues_count: 0,
            avatar_url: null,
            settings: JSON.stringify({ ...rest, readme: d.readme }),
            pending_delete: false,
            created_at: at,
            last_activity_at: at,
            updated_at: at,
            stream_version: v,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      }
      case 'ProjectUpdated': {
        const { id, changes } = event.data;
        const { default_branch, ...settings } = changes as ProjectChanges;
        const { columns, rest } = splitSettings(settings);
        const values: Record<string, unknown> = { ...columns, updated_at: at };
        if (default_branch !== undefined) values.default_branch = default_branch;
        if (Object.keys(rest).length > 0) values.settings = sql`settings || ${JSON.stringify(rest)}::jsonb`;
        // SET expressions see the row before the update: swap the last segment only.
        if (settings.path !== undefined) {
          values.path_with_namespace = sql`left(path_with_namespace, length(path_with_namespace) - length(path)) || ${settings.path}`;
        }
        if (settings.name !== undefined) {
          values.name_with_namespace = sql`left(name_with_namespace, length(name_with_namespace) - length(name)) || ${settings.name}`;
        }
        await advance(id, values);
        return;
      }
      case 'ProjectArchived':
      case 'ProjectUnarchived':
        await advance(event.data.id, { archived: event.type === 'ProjectArchived', updated_at: at });
        return;
      case 'ProjectStarred':
      case 'ProjectUnstarred': {
        const { id, user_id } = event.data;
        if (!(await advance(id))) return;
        if (event.type === 'ProjectStarred') {
          await trx
            .insertInto('project_stars')
            .values({ project_id: id, user_id, created_at: at })
            .onConflict((oc) => oc.columns(['project_id', 'user_id']).doNothing())
            .execute();
        } else {
          await trx.deleteFrom('project_stars').where('project_id', '=', id).where('user_id', '=', user_id).execute();
        }
        await sql`update projects set star_count = (select count(*) from project_stars where project_id = ${id}) where id = ${id}`.execute(trx);
        return;
      }
      case 'ProjectDeletionScheduled':
        await advance(event.data.id, { pending_delete: true, updated_at: at });
        return;
      case 'ProjectDeleted': {
        const { id } = event.data;
        await trx.deleteFrom('project_stars').where('project_id', '=', id).execute();
        await trx.deleteFrom('project_group_links').where('project_id', '=', id).execute();
        await trx.deleteFrom('projects').where('id', '=', id).execute();
        return;
      }

      // ───────── namespaces ─────────
      case 'GroupUpdated': {
        const { id, changes } = event.data;
        if (changes.path === undefined && changes.name === undefined) return;
        await recomputeNamespacedNames(trx, sql<SqlBool>`p.traversal_ids && array[${id}]::integer[]`);
        return;
      }
      case 'UserProfileUpdated': {
        const { id, changes } = event.data;
        if (changes.username === undefined && changes.name === undefined) return;
        await recomputeNamespacedNames(trx, sql<SqlBool>`p.namespace_id in (select id from namespaces where kind = 'user' and owner_id = ${id})`);
        return;
      }
      // GitLab: a group being removed hides its projects at once.
      case 'GroupDeletionScheduled':
        await sql`update projects set pending_delete = true where traversal_ids && array[${event.data.id}]::integer[] and not pending_delete`.execute(trx);
        return;
      // GitLab (Users::DestroyService): a removed user's personal projects go with them. The
      // namespace id comes from the log, so this holds whatever order projectors run in.
      case 'UserDeleted':
        await sql`update projects set pending_delete = true
                   where namespace_id = (select (data->>'namespace_id')::integer from events
                                          where stream_id = ${`user-${event.data.id}`} and event_type = 'UserCreated' limit 1)
                     and not pending_delete`.execute(trx);
        return;
    }
  },
};

/** path_with_namespace and name_with_namespace from the projects' namespace rows. */
async function recomputeNamespacedNames(trx: Db, which: Expression<SqlBool>) {
  await sql`
    update projects p
       set path_with_namespace = n.full_path || '/' || p.path,
           name_with_namespace = n.full_name || ' / ' || p.name,
           traversal_ids = n.traversal_ids
      from namespaces n
     where n.id = p.namespace_id and ${which}
       and (p.path_with_namespace <> n.full_path || '/' || p.path or p.name_with_namespace <> n.full_name || ' / ' || p.name)`.execute(trx);
}

// ───────────────────────────── Queries ─────────────────────────────

const today = () => new Date().toISOString().slice(0, 10);
const active = (alias: string) => sql<SqlBool>`(${sql.ref(`${alias}.expires_at`)} is null or ${sql.ref(`${alias}.expires_at`)} >= ${today()}::date)`;

/** A project row by id, including one being deleted (commands decide on those). */
export function findProjectRow(db: Db, id: number): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The caller's personal namespace id (GitLab: current_user.namespace_id). */
export async function personalNamespaceId(db: Db, userId: number): Promise<number | undefined> {
  const row = await db.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('owner_id', '=', userId).executeTakeFirst();
  return row?.id;
}

/** GitLab: User#personal_projects_count. */
export async function personalProjectCount(db: Db, namespaceId: number): Promise<number> {
  const row = await db
    .selectFrom('projects')
    .select(sql<string>`count(*)`.as('count'))
    .where('namespace_id', '=', namespaceId)
    .where('pending_delete', '=', false)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
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
 * Projects the user is authorized for at `minLevel` or above (GitLab: authorized_projects,
 * from project_authorizations): direct project membership, membership of the namespace or an
 * ancestor group, a share with one of the user's groups (capped by the share's level), and
 * the user's personal projects (GitLab 12: maintainer).
 */
export function authorizedFor(userId: number, minLevel: number = ACCESS.GUEST, alias = 'projects'): Expression<SqlBool> {
  const p = (column: string) => sql.ref(`${alias}.${column}`);
  const parts = [
    sql`exists (select 1 from members m where m.source_type = 'Project' and m.source_id = ${p('id')} and m.user_id = ${userId}
         and m.access_level >= ${minLevel} and ${active('m')})`,
    sql`${p('traversal_ids')} && array(select m.source_id from members m where m.source_type = 'Namespace' and m.user_id = ${userId}
         and m.access_level >= ${minLevel} and ${active('m')})`,
    sql`exists (select 1 from project_group_links l join namespaces lg on lg.id = l.group_id
                  join members m on m.source_type = 'Namespace' and m.user_id = ${userId} and m.source_id = any(lg.traversal_ids) and ${active('m')}
                 where l.project_id = ${p('id')} and ${active('l')} and least(l.group_access, m.access_level) >= ${minLevel})`,
  ];
  if (minLevel <= ACCESS.MAINTAINER) {
    parts.push(sql`${p('namespace_id')} in (select n.id from namespaces n where n.kind = 'user' and n.owner_id = ${userId})`);
  }
  return sql<SqlBool>`(${sql.join(parts, sql` or `)})`;
}

/**
 * GitLab: User#owned_projects — the user's personal projects and the projects of groups they
 * own (directly or through an ancestor).
 */
export function ownedBy(userId: number, alias = 'projects'): Expression<SqlBool> {
  const p = (column: string) => sql.ref(`${alias}.${column}`);
  return sql<SqlBool>`(${p('namespace_id')} in (select n.id from namespaces n where n.kind = 'user' and n.owner_id = ${userId})
    or ${p('traversal_ids')} && array(select m.source_id from members m where m.source_type = 'Namespace' and m.user_id = ${userId}
         and m.access_level >= ${ACCESS.OWNER} and ${active('m')}))`;
}

/**
 * SQL condition: projects the viewer may see (GitLab: Project.public_or_visible_to_user) —
 * open to them by visibility, or authorized (shares and personal projects included);
 * administrators see everything.
 */
export function projectReadableBy(viewer: Viewer | null, alias = 'projects'): Expression<SqlBool> {
  if (viewer?.isAdmin) return sql<SqlBool>`true`;
  const open = sql<SqlBool>`${sql.ref(`${alias}.visibility`)} in (${sql.join(visibleWithoutMembership(viewer))})`;
  if (!viewer) return open;
  return sql<SqlBool>`(${open} or ${authorizedFor(viewer.id, ACCESS.GUEST, alias)})`;
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
function fuzzyWords(query: string): string[] {
  const quoted = [...query.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  let rest = query;
  for (const phrase of quoted) rest = rest.replace(`"${phrase}"`, '');
  return [...rest.split(/\s+/).filter(Boolean), ...quoted].filter((w) => w.length >= 3);
}

/**
 * A feature usable by the viewer (GitLab: with_feature_available_for_user): enabled, or
 * private and the viewer is a member (or an administrator).
 */
export function featureAvailableTo(viewer: Viewer | null, level: 'issues_access_level' | 'merge_requests_access_level', alias = 'projects'): Expression<SqlBool> {
  const access = sql`${sql.ref(`${alias}.settings`)}->>${level}`;
  if (viewer?.isAdmin) return sql<SqlBool>`coalesce(${access}, 'enabled') <> 'disabled'`;
  const member = viewer ? authorizedFor(viewer.id, ACCESS.GUEST, alias) : sql<SqlBool>`false`;
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
  return q as Q;
}

/** GET /projects (GitLab's ProjectsFinder): the filtered, unordered selection. */
export function projectListQuery(db: Db, viewer: Viewer | null, filters: ProjectListFilters) {
  let query = db.selectFrom('projects').selectAll('projects').where('projects.pending_delete', '=', false);
  if (!viewer) {
    // GitLab: anonymous callers own nothing and are members of nothing.
    if (filters.owned || filters.membership || filters.minAccessLevel !== undefined) query = query.where(sql<SqlBool>`false`);
    else query = query.where(projectReadableBy(null));
  } else if (filters.owned) query = query.where(ownedBy(viewer.id));
  else if (filters.minAccessLevel !== undefined) query = query.where(authorizedFor(viewer.id, filters.minAccessLevel));
  else if (filters.membership) query = query.where(authorizedFor(viewer.id));
  else query = query.where(projectReadableBy(viewer));
  query = applyFilters(query, viewer, filters);
  if (filters.withIssuesEnabled) query = query.where(featureAvailableTo(viewer, 'issues_access_level'));
  // GitLab 12 (GET /projects): with_merge_requests_enabled is the feature not being disabled.
  if (filters.withMergeRequestsEnabled) query = query.where(sql<SqlBool>`coalesce(projects.settings->>'merge_requests_access_level', 'enabled') <> 'disabled'`);
  return query;
}

export interface GroupProjectFilters extends ProjectListFilters {
  readonly withShared: boolean;
  readonly includeSubgroups: boolean;
}

/** GET /groups/:id/projects (GitLab's GroupProjectsFinder): the group's (and shared) projects the viewer may see. */
export function groupProjectsQuery(db: Db, viewer: Viewer | null, groupId: number, filters: GroupProjectFilters) {
  const own = filters.includeSubgroups
    ? sql<SqlBool>`projects.traversal_ids && array[${groupId}]::integer[]`
    : sql<SqlBool>`projects.namespace_id = ${groupId}`;
  const shared = sql<SqlBool>`exists (select 1 from project_group_links l where l.project_id = projects.id and l.group_id = ${groupId})`;
  let query = db
    .selectFrom('projects')
    .selectAll('projects')
    .where('projects.pending_delete', '=', false)
    .where(filters.withShared ? sql<SqlBool>`(${own} or ${shared})` : own);
  if (!viewer) query = query.where(projectReadableBy(null));
  else if (filters.minAccessLevel !== undefined) query = query.where(authorizedFor(viewer.id, filters.minAccessLevel));
  else query = query.where(projectReadableBy(viewer));
  // GitLab's docs: owned limits to the caller's own projects (GroupProjectsFinder: owner access).
  if (filters.owned) query = viewer ? query.where(ownedBy(viewer.id)) : query.where(sql<SqlBool>`false`);
  query = applyFilters(query, viewer, filters);
  if (filters.withIssuesEnabled) query = query.where(featureAvailableTo(viewer, 'issues_access_level'));
  if (filters.withMergeRequestsEnabled) query = query.where(featureAvailableTo(viewer, 'merge_requests_access_level'));
  return query;
}

// ───────────────────────────── Presentation data ─────────────────────────────

/** Entities::SharedGroup rows of a project. */
export interface SharedGroupRow {
  readonly project_id: number;
  readonly group_id: number;
  readonly group_name: string;
  readonly group_full_path: string;
  readonly group_access: number;
  readonly expires_at: string | null;
}

/** What serialising a page of projects needs beyond the rows, loaded in a few queries. */
export interface ProjectPresentationData {
  readonly namespaces: ReadonlyMap<number, NamespaceRow>;
  /** Owners of personal namespaces, by namespace id. */
  readonly owners: ReadonlyMap<number, UserRow>;
  readonly shares: ReadonlyMap<number, readonly SharedGroupRow[]>;
  /** The viewer's direct project memberships (project id → access level). */
  readonly projectMembers: ReadonlyMap<number, number>;
  /** The viewer's direct group memberships (group id → access level). */
  readonly groupMembers: ReadonlyMap<number, number>;
  /** The viewer's effective access level per project (GitLab: max_member_access). */
  readonly roles: ReadonlyMap<number, number | null>;
}

export async function projectPresentationData(db: Db, viewer: Viewer | null, rows: readonly ProjectRow[]): Promise<ProjectPresentationData> {
  const projectIds = rows.map((r) => r.id);
  const namespaceIds = [...new Set(rows.map((r) => r.namespace_id))];
  const [namespaces, shares] = await Promise.all([
    namespaceIds.length === 0 ? [] : db.selectFrom('namespaces').selectAll().where('id', 'in', namespaceIds).execute(),
    projectIds.length === 0
      ? []
      : db
          .selectFrom('project_group_links as l')
          .innerJoin('namespaces as g', 'g.id', 'l.group_id')
          .select(['l.project_id', 'l.group_id', 'g.name as group_name', 'g.full_path as group_full_path', 'l.group_access', 'l.expires_at', 'g.traversal_ids'])
          .where('l.project_id', 'in', projectIds)
          .orderBy('l.project_id')
          .orderBy('l.created_at')
          .orderBy('l.group_id')
          .execute(),
  ]);
  const ownerIds = [...new Set(namespaces.filter((n) => n.kind === 'user' && n.owner_id !== null).map((n) => n.owner_id!))];
  const owners = ownerIds.length === 0 ? [] : await db.selectFrom('users').selectAll().where('id', 'in', ownerIds).execute();
  const ownerById = new Map(owners.map((u) => [u.id, u]));

  const projectMembers = new Map<number, number>();
  const groupMembers = new Map<number, number>();
  if (viewer && rows.length > 0) {
    const groupIds = [...new Set([...rows.flatMap((r) => r.traversal_ids), ...shares.flatMap((s) => s.traversal_ids)])];
    const [own, groups] = await Promise.all([
      db
        .selectFrom('members as m')
        .select(['m.source_id', 'm.access_level'])
        .where('m.source_type', '=', 'Project')
        .where('m.user_id', '=', viewer.id)
        .where('m.source_id', 'in', projectIds)
        .where(active('m'))
        .execute(),
      groupIds.length === 0
        ? []
        : db
            .selectFrom('members as m')
            .select(['m.source_id', 'm.access_level'])
            .where('m.source_type', '=', 'Namespace')
            .where('m.user_id', '=', viewer.id)
            .where('m.source_id', 'in', groupIds)
            .where(active('m'))
            .execute(),
    ]);
    for (const m of own) projectMembers.set(m.source_id, m.access_level);
    for (const m of groups) groupMembers.set(m.source_id, m.access_level);
  }

  const namespaceById = new Map(namespaces.map((n) => [n.id, n]));
  const sharesByProject = new Map<number, SharedGroupRow[]>();
  for (const { traversal_ids: _t, ...share } of shares) {
    const list = sharesByProject.get(share.project_id) ?? [];
    list.push(share);
    sharesByProject.set(share.project_id, list);
  }
  const roles = new Map<number, number | null>();
  for (const row of rows) {
    if (!viewer) {
      roles.set(row.id, null);
      continue;
    }
    const levels: number[] = [];
    const own = projectMembers.get(row.id);
    if (own !== undefined) levels.push(own);
    for (const id of row.traversal_ids) {
      const level = groupMembers.get(id);
      if (level !== undefined) levels.push(level);
    }
    for (const share of shares.filter((s) => s.project_id === row.id && (s.expires_at === null || s.expires_at >= today()))) {
      for (const id of share.traversal_ids) {
        const level = groupMembers.get(id);
        if (level !== undefined) levels.push(Math.min(level, share.group_access));
      }
    }
    const ns = namespaceById.get(row.namespace_id);
    if (ns?.kind === 'user' && ns.owner_id === viewer.id) levels.push(ACCESS.MAINTAINER);
    roles.set(row.id, levels.length > 0 ? Math.max(...levels) : null);
  }
  const ownersByNamespace = new Map<number, UserRow>();
  for (const ns of namespaces) {
    const owner = ns.owner_id === null ? undefined : ownerById.get(ns.owner_id);
    if (ns.kind === 'user' && owner) ownersByNamespace.set(ns.id, owner);
  }
  return { namespaces: namespaceById, owners: ownersByNamespace, shares: sharesByProject, projectMembers, groupMembers, roles };
}
