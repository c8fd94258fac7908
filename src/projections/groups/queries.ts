import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { ACCESS, VISIBILITIES, visibleWithoutMembership, type Viewer } from '../../domain/access.js';
import { authorizedGroupIds, authorizedGroups, unexpired } from '../access.js';
import { projectReadableBy } from '../projects/queries.js';

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

/**
 * SQL condition: groups (rows of `alias`) the viewer may read — GroupPolicy's read_group
 * (view_globally, a membership here or above, or has_projects: a project inside the viewer
 * may read); administrators read every group.
 */
export function groupReadableBy(viewer: Viewer | null, alias = 'namespaces'): Expression<SqlBool> {
  if (viewer?.isAdmin) return sql<SqlBool>`true`;
  const open = sql<SqlBool>`${sql.ref(`${alias}.visibility`)} in (${sql.join(visibleWithoutMembership(viewer))})`;
  const hasProjects = sql<SqlBool>`exists (select 1 from projects gp where gp.traversal_ids && array[${sql.ref(`${alias}.id`)}]
    and not gp.pending_delete and ${projectReadableBy(viewer, 'gp')})`;
  if (!viewer) return sql<SqlBool>`(${open} or ${hasProjects})`;
  return sql<SqlBool>`(${open} or ${authorizedGroups(viewer, ACCESS.GUEST, alias)} or ${hasProjects})`;
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
  // The viewer's groups and their descendants are the groups they hold a level on (the
  // authorizations projection); the ancestors come from their direct memberships and from the
  // projects they reach, each a set the size of the viewer's own memberships and shares.
  return sql<SqlBool>`(namespaces.id in (
      with mine(id) as (${authorizedGroupIds(viewer)})
      select id from mine
      union
      select unnest(g.traversal_ids) from members m join namespaces g on g.id = m.source_id
       where m.source_type = 'Namespace' and m.user_id = ${userId} and ${unexpired(today, 'm')}
      union
      select unnest(p.traversal_ids) from members m join projects p on p.id = m.source_id
       where m.source_type = 'Project' and m.user_id = ${userId} and ${unexpired(today, 'm')} and not p.pending_delete
      union
      select unnest(p.traversal_ids) from mine lg
        join project_group_links l on l.group_id = lg.id and ${unexpired(today, 'l')}
        join projects p on p.id = l.project_id
       where not p.pending_delete))`;
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
