import { sql } from 'kysely';
import type { Db } from '../../src/database/database.js';

/**
 * GitLab's rule computed from the source rows on every call, as forgelog's reads did before
 * the authorizations projection (issue 22): the oracle the projection is held to. The ways in
 * of the users `userIds`, each `(user_id, target_id, access_level, expires_at)`: to a project,
 * the direct project membership, a membership of the project's group or an ancestor, a share
 * with a group (through its members or its ancestors' members, capped by group_access, ending
 * when either ends: `least` ignores a null) and the personal namespace's owner as maintainer;
 * to a group, memberships of the group or an ancestor. Memberships and shares count until
 * their expires_at.
 */
const projectWaysIn = (users: number[]) => sql`
  select * from (
    select m.user_id, m.source_id as target_id, m.access_level, m.expires_at from members m where m.source_type = 'Project'
    union all
    select m.user_id, p.id, m.access_level, m.expires_at from members m join projects p on p.traversal_ids && array[m.source_id]
     where m.source_type = 'Namespace'
    union all
    select m.user_id, l.project_id, least(l.group_access, m.access_level), least(l.expires_at, m.expires_at) from members m
      join namespaces g on g.traversal_ids && array[m.source_id]
      join project_group_links l on l.group_id = g.id
     where m.source_type = 'Namespace'
    union all
    select n.owner_id, p.id, 40, null::date from namespaces n join projects p on p.namespace_id = n.id where n.kind = 'user'
  ) w where user_id = any(${users}::integer[])`;
const groupWaysIn = (users: number[]) => sql`
  select m.user_id, d.id as target_id, m.access_level, m.expires_at from members m join namespaces d on d.traversal_ids && array[m.source_id]
   where m.source_type = 'Namespace' and m.user_id = any(${users}::integer[])`;

/** The oracle's highest level per (user, project) and per (user, group) on `date`. */
export async function oracleLevels(db: Db, userIds: readonly number[], date: string) {
  const levels = async (waysIn: typeof projectWaysIn) => {
    const { rows } = await sql<{ user_id: number; target_id: number; level: number }>`
      select user_id, target_id, max(access_level) as level from (${waysIn([...userIds])}) w
       where expires_at is null or expires_at >= ${date}::date group by user_id, target_id`.execute(db);
    return keyed(rows.map((r) => [r.user_id, r.target_id, r.level]));
  };
  return { projects: await levels(projectWaysIn), groups: await levels(groupWaysIn) };
}

/** What the authorizations projection holds for the same users on the same date. */
export async function projectedLevels(db: Db, userIds: readonly number[], date: string) {
  const users = [...userIds];
  const live = sql`(expires_at is null or expires_at >= ${date}::date)`;
  const { rows: projects } = await sql<{ user_id: number; project_id: number; level: number }>`
    select user_id, project_id, max(access_level) as level from project_authorizations
     where user_id = any(${users}::integer[]) and ${live} group by user_id, project_id`.execute(db);
  const { rows: groups } = await sql<{ user_id: number; group_id: number; level: number }>`
    select user_id, group_id, max(access_level) as level from group_authorizations
     where user_id = any(${users}::integer[]) and ${live} group by user_id, group_id`.execute(db);
  return { projects: keyed(projects.map((r) => [r.user_id, r.project_id, r.level])), groups: keyed(groups.map((r) => [r.user_id, r.group_id, r.level])) };
}

/**
 * The rows the projection must hold for the users `userIds`, whatever the date: per (user,
 * project) and per (user, group), one row per level a way in gives, with the latest expiry of
 * that level's ways in (none when one never expires). The levels' comparison above cannot see
 * a stale row below a user's highest level, nor a wrong expiry past the dates it checks; this
 * one can, right after the write that left it.
 */
export async function oracleRows(db: Db, userIds: readonly number[]) {
  const rowsOf = async (waysIn: typeof projectWaysIn) => {
    const { rows } = await sql<{ row: string }>`
      select concat_ws(':', user_id, target_id, access_level, case when bool_or(expires_at is null) then 'never' else max(expires_at)::text end) as row
        from (${waysIn([...userIds])}) w group by user_id, target_id, access_level order by 1`.execute(db);
    return rows.map((r) => r.row);
  };
  return { projects: await rowsOf(projectWaysIn), groups: await rowsOf(groupWaysIn) };
}

/** The rows the projection holds for the same users, as oracleRows gives them. */
export async function projectedRows(db: Db, userIds: readonly number[]) {
  const users = [...userIds];
  const row = (target: string) => sql`concat_ws(':', user_id, ${sql.ref(target)}, access_level, coalesce(expires_at::text, 'never')) as row`;
  const { rows: projects } = await sql<{ row: string }>`
    select ${row('project_id')} from project_authorizations where user_id = any(${users}::integer[]) order by 1`.execute(db);
  const { rows: groups } = await sql<{ row: string }>`
    select ${row('group_id')} from group_authorizations where user_id = any(${users}::integer[]) order by 1`.execute(db);
  return { projects: projects.map((r) => r.row), groups: groups.map((r) => r.row) };
}

/** `user:target → level`, sorted, so that two answers compare as plain objects. */
const keyed = (rows: [number, number, number][]) =>
  Object.fromEntries(rows.map(([user, target, level]) => [`${user}:${target}`, Number(level)]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
