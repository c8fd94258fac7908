import { sql, type ColumnType, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { Db } from '../database.js';
import type { Viewer, Visibility } from '../domain/access.js';
import { VISIBILITIES, VISIBILITY_LEVEL, visibleWithoutMembership } from '../domain/access.js';
import { GROUP_EVENT_TYPES, type GroupEvent, type ParentGroup } from '../domain/groups.js';
import type { UserEvent } from '../domain/users.js';
import type { ProjectedEvent } from '../eventstore/types.js';
import { authorizedGroups, memberNamespaceIds, unexpired } from './access.js';
import { projectReadableBy } from './projects/queries.js';
import type { Projector } from './projector.js';
import { recordset } from './recordset.js';
import { REPLAY_GUARD, claimStreamVersion, type StreamVersionsTable } from './stream-versions.js';

// ───────────────────────────── Tables ─────────────────────────────

type Timestamp = ColumnType<Date, string, string>;

/** Groups and personal (user) namespaces; `traversal_ids` runs from the root to this namespace. */
export interface NamespacesTable {
  id: number;
  kind: 'user' | 'group';
  name: string;
  path: string;
  full_name: string;
  full_path: string;
  parent_id: number | null;
  owner_id: number | null;
  traversal_ids: number[];
  description: string;
  visibility: Visibility;
  share_with_group_lock: boolean;
  require_two_factor_authentication: boolean;
  two_factor_grace_period: number;
  project_creation_level: 'noone' | 'maintainer' | 'developer';
  auto_devops_enabled: boolean | null;
  subgroup_creation_level: 'owner' | 'maintainer';
  emails_disabled: boolean | null;
  mentions_disabled: boolean | null;
  lfs_enabled: boolean;
  request_access_enabled: boolean;
  avatar_url: string | null;
  file_template_project_id: number | null;
  shared_runners_minutes_limit: number | null;
  extra_shared_runners_minutes_limit: number | null;
  runners_token: string | null;
  pending_delete: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
  stream_version: number;
}

/** GitLab's group custom attributes (admin-only key/value pairs). */
export interface GroupCustomAttributesTable {
  group_id: number;
  key: string;
  value: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface NamespacesReadTables {
  namespaces: NamespacesTable;
  group_custom_attributes: GroupCustomAttributesTable;
  namespaces_stream_versions: StreamVersionsTable;
}

export type NamespaceRow = Selectable<NamespacesTable>;
export type GroupCustomAttributeRow = Selectable<GroupCustomAttributesTable>;

// ───────────────────────────── Projector ─────────────────────────────

const USER_EVENTS = ['UserCreated', 'UserProfileUpdated', 'UserDeleted'] as const;

const VERSIONS = 'namespaces_stream_versions';

/**
 * Personal namespaces (from the user stream) and groups (from group streams). Every event is
 * applied once: guarded by its stream version in namespaces_stream_versions, which outlives
 * the rows (a GroupCreated or GroupCustomAttributeSet replayed after GroupDeleted writes
 * nothing); a group's row keeps its own stream_version too. What cascades to descendants
 * (full path and name, pending deletion, the sharing lock) is recomputed from the rows.
 */
export const namespacesProjector: Projector = {
  name: 'namespaces',
  version: 1,
  mode: 'inline',
  handles: [...USER_EVENTS, ...GROUP_EVENT_TYPES],
  tables: ['namespaces', 'group_custom_attributes', VERSIONS],
  async apply(stored: ProjectedEvent, trx: Db) {
    if (await claimStreamVersion(trx, VERSIONS, stored)) await project(stored, trx);
  },

  /** Rebuild path: runs of consecutive UserCreated become one multi-row insert. */
  async applyBatch(events: readonly ProjectedEvent[], trx: Db, guard = REPLAY_GUARD) {
    const fresh = await guard.keep(trx, VERSIONS, events);
    let created: ProjectedEvent[] = [];
    for (const event of fresh) {
      if (event.type === 'UserCreated') {
        created.push(event);
        continue;
      }
      if (created.length > 0) await insertPersonalNamespaces(trx, created);
      created = [];
      await project(event, trx);
    }
    if (created.length > 0) await insertPersonalNamespaces(trx, created);
    await guard.record(trx, VERSIONS, fresh);
  },
};

/** Applies an event that is new to the projection (the callers checked its stream version). */
async function project(stored: ProjectedEvent, trx: Db): Promise<void> {
  const event = stored as unknown as (UserEvent | GroupEvent) & ProjectedEvent;
  const at = stored.occurredAt.toISOString();
  const v = stored.streamVersion;
  /** Moves a group row to this event's version; false when the event was applied already. */
  const advance = async (id: number, values: Record<string, unknown> = {}) => {
    const result = await trx
      .updateTable('namespaces')
      .set({ ...values, stream_version: v })
      .where('id', '=', id)
      .where('kind', '=', 'group')
      .where('stream_version', '<', v)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  };
  switch (event.type) {
    // ───────── personal namespaces ─────────
    case 'UserCreated':
      await insertPersonalNamespaces(trx, [event]);
      return;
    case 'UserProfileUpdated': {
      const { username, name } = event.data.changes;
      if (username === undefined && name === undefined) return;
      await trx
        .updateTable('namespaces')
        .set({
          ...(username !== undefined ? { path: username, full_path: username } : {}),
          ...(name !== undefined ? { name, full_name: name } : {}),
          updated_at: at,
          stream_version: v,
        })
        .where('kind', '=', 'user')
        .where('owner_id', '=', event.data.id)
        .where('stream_version', '<', v)
        .execute();
      return;
    }
    case 'UserDeleted':
      await trx.deleteFrom('namespaces').where('kind', '=', 'user').where('owner_id', '=', event.data.id).execute();
      return;

    // ───────── groups ─────────
    case 'GroupCreated': {
      const { id, parent_id, traversal_ids, full_path, full_name, ...settings } = event.data;
      // The parent's row, locked: a concurrent rename, lock or deletion of the parent either
      // finished before (we see its new state) or waits for us (its cascade then sees this row).
      const parent = parent_id === null ? undefined : await lockedRow(trx, parent_id);
      await trx
        .insertInto('namespaces')
        .values({
          ...settings,
          share_with_group_lock: settings.share_with_group_lock || (parent?.share_with_group_lock ?? false),
          id,
          kind: 'group',
          parent_id,
          owner_id: null,
          traversal_ids: parent ? [...parent.traversal_ids, id] : [...traversal_ids],
          full_path: parent ? `${parent.full_path}/${settings.path}` : full_path,
          full_name: parent ? `${parent.full_name} / ${settings.name}` : full_name,
          avatar_url: null,
          runners_token: null,
          pending_delete: parent?.pending_delete ?? false,
          created_at: at,
          updated_at: at,
          stream_version: v,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return;
    }
    case 'GroupUpdated': {
      const { id, changes } = event.data;
      if (!(await advance(id, { ...changes, updated_at: at }))) return;
      if (changes.path !== undefined || changes.name !== undefined) await recomputeFullPaths(trx, id);
      // GitLab: Namespace#force_share_with_group_lock_on_descendants.
      if (changes.share_with_group_lock === true) {
        await trx
          .updateTable('namespaces')
          .set({ share_with_group_lock: true })
          .where(sql<SqlBool>`traversal_ids && array[${id}]::integer[]`)
          .where('id', '<>', id)
          .execute();
      }
      return;
    }
    case 'GroupDeletionScheduled': {
      const { id } = event.data;
      // The group's own row first: it waits for a subgroup being created under it (which
      // holds the row), so the next statement's snapshot sees that subgroup and marks it.
      if (!(await advance(id, { pending_delete: true, updated_at: at }))) return;
      await trx.updateTable('namespaces').set({ pending_delete: true }).where(sql<SqlBool>`traversal_ids && array[${id}]::integer[]`).execute();
      return;
    }
    case 'GroupDeleted':
      await trx.deleteFrom('group_custom_attributes').where('group_id', '=', event.data.id).execute();
      await trx.deleteFrom('namespaces').where('id', '=', event.data.id).where('kind', '=', 'group').execute();
      return;
    case 'GroupCustomAttributeSet': {
      const { id, key, value } = event.data;
      if (!(await advance(id))) return;
      await trx
        .insertInto('group_custom_attributes')
        .values({ group_id: id, key, value, created_at: at, updated_at: at })
        .onConflict((oc) => oc.columns(['group_id', 'key']).doUpdateSet({ value, updated_at: at }))
        .execute();
      return;
    }
    case 'GroupCustomAttributeDeleted': {
      const { id, key } = event.data;
      if (!(await advance(id))) return;
      await trx.deleteFrom('group_custom_attributes').where('group_id', '=', id).where('key', '=', key).execute();
      return;
    }
  }
}

/** Personal namespaces of new users (idempotent: an existing id is left alone). */
async function insertPersonalNamespaces(trx: Db, events: readonly ProjectedEvent[]) {
  for (let i = 0; i < events.length; i += 2000) {
    const rows = events.slice(i, i + 2000).map((stored) => {
      const d = (stored as unknown as Extract<UserEvent, { type: 'UserCreated' }>).data;
      const at = stored.occurredAt.toISOString();
      // Fast path (not a pattern to copy): Object.assign, not `{ ...PERSONAL_DEFAULTS, … }`,
      // whose literal drops V8 into dictionary mode (slow rows, slow JSON) in a rebuild.
      return Object.assign({}, PERSONAL_DEFAULTS, {
        id: d.namespace_id,
        kind: 'user',
        name: d.name,
        path: d.username,
        full_name: d.name,
        full_path: d.username,
        parent_id: null,
        owner_id: d.id,
        traversal_ids: [d.namespace_id],
        created_at: at,
        updated_at: at,
        stream_version: stored.streamVersion,
      });
    });
    await sql`insert into namespaces select * from ${recordset('namespaces', rows)} on conflict (id) do nothing`.execute(trx);
  }
}

// GitLab: a personal namespace is public (its projects carry their own visibility).
const PERSONAL_DEFAULTS = {
  description: '',
  visibility: 'public' as Visibility,
  share_with_group_lock: false,
  require_two_factor_authentication: false,
  two_factor_grace_period: 48,
  project_creation_level: 'developer' as const,
  auto_devops_enabled: null,
  subgroup_creation_level: 'maintainer' as const,
  emails_disabled: null,
  mentions_disabled: null,
  lfs_enabled: true,
  request_access_enabled: false,
  avatar_url: null,
  file_template_project_id: null,
  shared_runners_minutes_limit: null,
  extra_shared_runners_minutes_limit: null,
  runners_token: null,
  pending_delete: false,
};

async function lockedRow(trx: Db, id: number) {
  const { rows } = await sql<Pick<NamespaceRow, 'traversal_ids' | 'full_path' | 'full_name' | 'share_with_group_lock' | 'pending_delete'>>`
    select traversal_ids, full_path, full_name, share_with_group_lock, pending_delete from namespaces where id = ${id} for update`.execute(trx);
  return rows[0];
}

/** full_path and full_name of a group and its descendants, from their ancestors' rows. */
async function recomputeFullPaths(trx: Db, id: number) {
  await sql`
    update namespaces d
       set full_path = s.full_path, full_name = s.full_name
      from (select n.id,
                   string_agg(a.path, '/' order by x.ord) as full_path,
                   string_agg(a.name, ' / ' order by x.ord) as full_name
              from namespaces n
             cross join lateral unnest(n.traversal_ids) with ordinality as x(ancestor_id, ord)
              join namespaces a on a.id = x.ancestor_id
             where n.traversal_ids && array[${id}]::integer[]
             group by n.id) s
     where d.id = s.id and (d.full_path <> s.full_path or d.full_name <> s.full_name)`.execute(trx);
}

// ───────────────────────────── Queries ─────────────────────────────

/** A group row, including one being deleted (commands decide on those). */
export function findGroupRow(db: Db, id: number): Promise<NamespaceRow | undefined> {
  return db.selectFrom('namespaces').selectAll().where('id', '=', id).where('kind', '=', 'group').executeTakeFirst();
}

/**
 * A namespace's row, locked until the transaction ends: `share` to decide on it (a parent's
 * visibility), `update` to change what others decide on. Commands read such facts inside
 * their write transaction (src/commands/handler.ts), so a concurrent change of the row waits
 * for the commit, or the command sees it.
 */
export function lockNamespaceRow(trx: Db, id: number, mode: 'share' | 'update'): Promise<NamespaceRow | undefined> {
  const query = trx.selectFrom('namespaces').selectAll().where('id', '=', id);
  return (mode === 'share' ? query.forShare() : query.forUpdate()).executeTakeFirst();
}

export const toParentGroup = (row: NamespaceRow): ParentGroup => ({
  id: row.id,
  visibility: row.visibility,
  full_path: row.full_path,
  full_name: row.full_name,
  traversal_ids: row.traversal_ids,
  share_with_group_lock: row.share_with_group_lock,
});

const mostVisible = (rows: { visibility: Visibility }[]): Visibility | null =>
  rows.reduce<Visibility | null>((max, r) => (max === null || VISIBILITY_LEVEL[r.visibility] > VISIBILITY_LEVEL[max] ? r.visibility : max), null);

/** The most visible direct subgroup (GitLab: visibility_level_allowed_by_sub_groups). */
export async function mostVisibleSubgroup(db: Db, groupId: number): Promise<Visibility | null> {
  const rows = await db
    .selectFrom('namespaces')
    .select('visibility')
    .distinct()
    .where('parent_id', '=', groupId)
    .where('kind', '=', 'group')
    .where('pending_delete', '=', false)
    .execute();
  return mostVisible(rows);
}

/** The most visible project directly in the group (GitLab: visibility_level_allowed_by_projects). */
export async function mostVisibleProject(db: Db, groupId: number): Promise<Visibility | null> {
  const rows = await db.selectFrom('projects').select('visibility').distinct().where('namespace_id', '=', groupId).where('pending_delete', '=', false).execute();
  return mostVisible(rows);
}

/** A group and every descendant (pending deletion or not), deepest first. */
export function groupSubtree(db: Db, groupId: number): Promise<NamespaceRow[]> {
  return db
    .selectFrom('namespaces')
    .selectAll()
    .where('kind', '=', 'group')
    .where(sql<SqlBool>`traversal_ids && array[${groupId}]::integer[]`)
    .orderBy(sql`cardinality(traversal_ids)`, 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** GitLab's has_projects rule: a project in the group or its subgroups the viewer may see. */
export async function groupHasProjectVisibleTo(db: Db, viewer: Viewer | null, groupId: number): Promise<boolean> {
  const row = await db
    .selectFrom('projects')
    .select('id')
    .where(sql<SqlBool>`traversal_ids && array[${groupId}]::integer[]`)
    .where('pending_delete', '=', false)
    .where(projectReadableBy(viewer))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function customAttributesOf(db: Db, groupIds: readonly number[]): Promise<Map<number, { key: string; value: string }[]>> {
  const byGroup = new Map<number, { key: string; value: string }[]>();
  if (groupIds.length === 0) return byGroup;
  const rows = await db
    .selectFrom('group_custom_attributes')
    .select(['group_id', 'key', 'value'])
    .where('group_id', 'in', [...groupIds])
    .orderBy('group_id')
    .orderBy('key')
    .execute();
  for (const row of rows) {
    const list = byGroup.get(row.group_id) ?? [];
    list.push({ key: row.key, value: row.value });
    byGroup.set(row.group_id, list);
  }
  return byGroup;
}

export function findGroupCustomAttribute(db: Db, groupId: number, key: string) {
  return db.selectFrom('group_custom_attributes').select(['key', 'value']).where('group_id', '=', groupId).where('key', '=', key).executeTakeFirst();
}

// ───────────────────────────── Group lists (GitLab's GroupsFinder) ─────────────────────────────

export interface GroupListFilters {
  readonly allAvailable: boolean;
  readonly owned: boolean;
  readonly minAccessLevel?: number | undefined;
  readonly parentId?: number | undefined;
  readonly skipGroups?: readonly number[] | undefined;
  readonly search?: string | undefined;
  /** Only honoured for administrators (GitLab: read_custom_attribute). */
  readonly customAttributes?: Readonly<Record<string, string>> | undefined;
}

/**
 * The groups of a viewer's list (GitLab's GroupsFinder#all_groups): `owned` → groups the
 * viewer owns directly; `min_access_level` → groups where the viewer has at least that
 * level, and their descendants; administrators with all_available → every group; others →
 * their groups with ancestors and descendants, plus (anonymous, or all_available) the
 * groups open to them.
 */
export function groupListedFor(viewer: Viewer | null, filters: GroupListFilters): Expression<SqlBool> {
  if (filters.owned) {
    if (!viewer) return sql<SqlBool>`false`;
    return sql<SqlBool>`exists (select 1 from members m where m.source_type = 'Namespace' and m.source_id = namespaces.id
      and m.user_id = ${viewer.id} and m.access_level >= 50 and ${unexpired(viewer.today, 'm')})`;
  }
  if (viewer && filters.minAccessLevel !== undefined) return authorizedGroups(viewer, filters.minAccessLevel);
  if (viewer?.isAdmin && filters.allAvailable) return sql<SqlBool>`true`;
  const parts: Expression<SqlBool>[] = [];
  if (viewer) parts.push(hierarchyOf(viewer));
  if (!viewer || filters.allAvailable) {
    const levels = viewer?.isAdmin ? [...VISIBILITIES] : visibleWithoutMembership(viewer);
    parts.push(sql<SqlBool>`namespaces.visibility in (${sql.join(levels)})`);
  }
  return sql<SqlBool>`(${sql.join(parts, sql` or `)})`;
}

/**
 * GitLab: Gitlab::ObjectHierarchy(user.authorized_groups, user.groups).all_objects — the
 * descendants of the viewer's groups, and the ancestors of their groups and of the
 * namespaces of the projects they are authorized for (members, or shared with their groups).
 */
function hierarchyOf(viewer: Viewer): Expression<SqlBool> {
  const { id: userId, today } = viewer;
  const groups = memberNamespaceIds(viewer);
  // One id set, computed once (a hashed subplan) and probed per row: testing
  // `traversal_ids && <the viewer's groups>` on every row compared each row's path with
  // every group of the viewer (27–46 ms for a member of 300 groups among 10,000); here the
  // descendants come from the GIN index on traversal_ids.
  return sql<SqlBool>`(namespaces.id in (
      select d.id from namespaces d where d.traversal_ids && ${groups}
      union
      select unnest(g.traversal_ids) from namespaces g where g.id = any(${groups})
      union
      select unnest(p.traversal_ids) from members m join projects p on p.id = m.source_id
       where m.source_type = 'Project' and m.user_id = ${userId} and ${unexpired(today, 'm')} and not p.pending_delete
      union
      select unnest(p.traversal_ids) from project_group_links l
        join projects p on p.id = l.project_id
        join namespaces lg on lg.id = l.group_id
       where lg.traversal_ids && ${groups} and ${unexpired(today, 'l')} and not p.pending_delete))`;
}

/** GitLab's Namespace.search (fuzzy_search on name and path). */
export function groupSearch(query: string): Expression<SqlBool> | undefined {
  const squished = query.trim().replace(/\s+/g, ' ');
  if (squished === '') return undefined;
  const words = fuzzyWords(squished);
  const escape = (s: string) => s.replace(/[\\%_]/g, '\\$&');
  const column = (name: 'name' | 'path') =>
    words.length > 0
      ? sql.join(words.map((w) => sql`${sql.ref(`namespaces.${name}`)} ilike ${`%${escape(w)}%`}`), sql` and `)
      : // GitLab: no word of 3 characters or more — the whole query, case-insensitively, exactly.
        sql`${sql.ref(`namespaces.${name}`)} ilike ${escape(squished)}`;
  return sql<SqlBool>`((${column('name')}) or (${column('path')}))`;
}

/** GitLab's Gitlab::SQL::Pattern#select_fuzzy_words: quoted phrases and words of 3+ characters. */
function fuzzyWords(query: string): string[] {
  const quoted = [...query.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  let rest = query;
  for (const phrase of quoted) rest = rest.replace(`"${phrase}"`, '');
  return [...rest.split(/\s+/).filter(Boolean), ...quoted].filter((w) => w.length >= 3);
}

export function groupCustomAttributeFilter(attributes: Readonly<Record<string, string>>): Expression<SqlBool> {
  const entries = Object.entries(attributes);
  if (entries.length === 0) return sql<SqlBool>`true`;
  return sql<SqlBool>`(${sql.join(
    entries.map(([key, value]) => sql`exists (select 1 from group_custom_attributes a where a.group_id = namespaces.id and a.key = ${key} and a.value = ${value})`),
    sql` and `,
  )})`;
}

/** The filtered (unordered) selection of a group list. */
export function groupListQuery(db: Db, viewer: Viewer | null, filters: GroupListFilters) {
  let query = db
    .selectFrom('namespaces')
    .selectAll('namespaces')
    .where('namespaces.kind', '=', 'group')
    .where('namespaces.pending_delete', '=', false)
    .where(groupListedFor(viewer, filters));
  if (filters.parentId !== undefined) query = query.where('namespaces.parent_id', '=', filters.parentId);
  if (filters.customAttributes && viewer?.isAdmin) query = query.where(groupCustomAttributeFilter(filters.customAttributes));
  if (filters.skipGroups && filters.skipGroups.length > 0) query = query.where('namespaces.id', 'not in', [...filters.skipGroups]);
  const search = filters.search === undefined ? undefined : groupSearch(filters.search);
  if (search) query = query.where(search);
  return query;
}
