import { sql, type CompiledQuery, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { VISIBILITY_LEVEL, type Visibility } from '../../domain/access.js';
import type { ParentGroup } from '../../domain/groups/settings.js';
import type { NamespaceRow } from './tables.js';

/**
 * The namespace rows commands decide on (a parent's visibility and lock, a group's subtree),
 * read inside their write transaction (src/commands/groups.ts, projects.ts).
 */

/** A group row, including one being deleted (commands decide on those). */
export function findGroupRow(db: Db, id: number): Promise<NamespaceRow | undefined> {
  return db.selectFrom('namespaces').selectAll().where('id', '=', id).where('kind', '=', 'group').executeTakeFirst();
}

/**
 * A namespace's row, locked until the transaction ends: `share` to decide on it (a parent's
 * visibility), `update` to change what others decide on. Commands read such facts inside
 * their write transaction (src/commands/kernel/handler.ts), so a concurrent change of the row waits
 * for the commit, or the command sees it. A creation under the row keeps to `share` through
 * its inline projections too: two creations that each upgrade a shared lock deadlock.
 */
export function lockNamespaceRow(trx: Db, id: number, mode: 'share' | 'update'): Promise<NamespaceRow | undefined> {
  const query = trx.selectFrom('namespaces').selectAll().where('id', '=', id);
  return (mode === 'share' ? query.forShare() : query.forUpdate()).executeTakeFirst();
}

/**
 * lockNamespaceRow('share') for a command decided on the row as read before its transaction
 * (CommandSpec.optimistic): a statement that locks the row and divides by zero unless it is
 * still there, not being deleted, with `columns` as they were in `row`.
 */
export function namespaceUnchanged(db: Db, row: NamespaceRow, columns: readonly (keyof NamespaceRow & string)[]): CompiledQuery {
  const same = columns.map((column) => sql`${sql.ref(column)} is not distinct from ${row[column]}`);
  return sql`select 1 / (select count(*) from (
      select 1 from namespaces where id = ${row.id} and not pending_delete and ${sql.join(same, sql` and `)} for share) n)::int as held`.compile(db);
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
