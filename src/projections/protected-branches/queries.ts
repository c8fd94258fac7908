import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import type { AccessKind, RuleFacts } from '../../domain/protected-branches.js';
import { projectAccessLevelOf } from '../access.js';
import { fuzzyWords } from '../projects/queries.js';

/** The protected branches API's reads: branches, their rules, and the facts a new rule needs. */

/**
 * A project's protected branches, optionally filtered as GitLab's ProtectedBranch.by_name
 * (fuzzy_arel_match on the lower-cased query: words of 3+ characters anywhere, otherwise the
 * whole query exactly, case-insensitively). A select without order.
 */
export function protectedBranchesQuery(db: Db, projectId: number, search?: string) {
  const query = db.selectFrom('protected_branches').selectAll().where('project_id', '=', projectId);
  const squished = (search ?? '').trim().replace(/\s+/g, ' ').toLowerCase();
  if (squished === '') return query;
  const escape = (s: string) => s.replace(/[\\%_]/g, '\\$&');
  const words = fuzzyWords(squished);
  const match =
    words.length > 0 ? sql.join(words.map((w) => sql`name ilike ${`%${escape(w)}%`}`), sql` and `) : sql`name ilike ${escape(squished)}`;
  return query.where(sql<SqlBool>`(${match})`);
}

export const findProtectedBranch = (db: Db, projectId: number, name: string) =>
  db.selectFrom('protected_branches').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();

export interface RuleView {
  readonly protected_branch_id: number;
  readonly kind: AccessKind;
  readonly access_level: number;
  readonly user_id: number | null;
  readonly group_id: number | null;
  /** The user's or group's name (ProtectedRefAccess#humanize); null for a role. */
  readonly holder_name: string | null;
}

/** The rules of some protected branches, per branch and kind in their order. */
export async function rulesOf(db: Db, branchIds: readonly number[]): Promise<RuleView[]> {
  if (branchIds.length === 0) return [];
  return db
    .selectFrom('protected_branch_access_levels as r')
    .leftJoin('users as u', 'u.id', 'r.user_id')
    .leftJoin('namespaces as g', 'g.id', 'r.group_id')
    .select(['r.protected_branch_id', 'r.kind', 'r.access_level', 'r.user_id', 'r.group_id'])
    .select(sql<string | null>`coalesce(u.name, g.name)`.as('holder_name'))
    .where('r.protected_branch_id', 'in', [...branchIds])
    .orderBy('r.protected_branch_id')
    .orderBy('r.kind')
    .orderBy('r.position')
    .execute();
}

/**
 * Of the users and groups some rules name: the users who are members of the project
 * (GitLab's project.team.member?: any way in, by the project's authorizations) and the
 * groups it is shared with (project.project_group_links).
 */
export async function ruleFacts(db: Db, projectId: number, userIds: readonly number[], groupIds: readonly number[], today: string): Promise<RuleFacts> {
  const memberUserIds: number[] = [];
  for (const id of new Set(userIds)) {
    const level = await projectAccessLevelOf(db, { id, isAdmin: false, external: false, today }, projectId);
    if (level !== null && level > 0) memberUserIds.push(id);
  }
  const shared =
    groupIds.length === 0
      ? []
      : await db.selectFrom('project_group_links').select('group_id').where('project_id', '=', projectId).where('group_id', 'in', [...new Set(groupIds)]).execute();
  return { memberUserIds, sharedGroupIds: shared.map((row) => row.group_id) };
}
