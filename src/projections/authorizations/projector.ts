import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../database/database.js';
import { ACCESS, type MemberSourceType } from '../../domain/access.js';
import { groupStreamId } from '../../domain/groups/decider.js';
import { defineProjector } from '../projector.js';

/**
 * GitLab's project_authorizations as a projection, and the same for groups: every event that
 * changes a way in (a membership, a project or group coming or going, a share) recomputes the
 * rows of the users and targets it touches — from the members, projects, namespaces and
 * project_group_links rows, which the projectors before this one (registry order) have just
 * written. So a request reads a level by key (src/projections/access.ts) and no request
 * computes a closure; the closure is computed here, once per write, for the touched rows only.
 *
 * Every handler recomputes from the rows as they are, so applying an event again (a replay,
 * an older event after a newer one) writes what is there already: no stream-version guard.
 * The statements read nothing back, so they go out with the append in one round trip
 * (src/commands/kernel/record-projections.ts).
 */

// ───────────────────────────── Concurrent writers ─────────────────────────────

/**
 * Two writers that each recompute from rows the other has not committed would each miss the
 * other's change: a member added to a group while a project is created below it (the project
 * refresh does not see the membership, the membership refresh does not see the project). So
 * every event first takes transaction locks on what it recomputes from, all in one statement:
 * - a membership change, exclusively: its group (or project), and its user — it recomputes
 *   that user over the group's whole subtree (over one project: the user shared, so that a
 *   user's new projects do not wait for each other);
 * - a project's rows recomputed for every user (it is created, shared or unshared, or a group
 *   it is shared with goes) or deleted: the project exclusively, so that two such refreshes of
 *   one project do not both write its rows; shared, every namespace whose members reach it —
 *   above it, and above each group it is shared with (a membership change there recomputes
 *   the project for its user: one in flight beside the project's deletion, not waiting for it,
 *   wrote the user's row back after the deletion had deleted the project's rows);
 * - a group coming or going, shared: every namespace above it.
 * A project created below a group then waits for a membership change of that group in
 * flight, and the other way round; a waiting writer's next statement sees what the other
 * committed (read committed). Creations side by side, even in one parent, do not wait for
 * each other, nor do membership changes of other users in other groups. Locks are taken in
 * one order (class, key), so writers never wait for each other in a circle. On the embedded
 * database (one session) the locks are free.
 */
const NAMESPACE_LOCK = 0x66617501; // 'fau' + 1, 2, 3: key spaces of their own (rebuild.ts and seal.ts use others)
const PROJECT_LOCK = 0x66617502;
const USER_LOCK = 0x66617503;

/** Rows of (lock class, key, exclusive) to take; a key of a row that is gone is null and takes no lock. */
type Keys = RawBuilder<unknown>;
const key = (lockClass: number, id: number, exclusive: boolean): Keys => sql`select ${lockClass}::integer, ${id}::integer, ${exclusive}::boolean`;
const ancestorsOf = (namespaces: RawBuilder<unknown>): Keys =>
  sql`select ${NAMESPACE_LOCK}::integer, unnest(traversal_ids), false from namespaces where id in (${namespaces})`;
const namespaceAndAncestors = (namespaceId: number): Keys => ancestorsOf(sql`select ${namespaceId}::integer`);
/** A deleted group and its ancestors, from its creation event (its row is gone by now). */
const deletedGroupAndAncestors = (groupId: number): Keys =>
  sql`select ${NAMESPACE_LOCK}::integer, jsonb_array_elements_text(data->'traversal_ids')::integer, false from events
       where stream_id = ${groupStreamId(groupId)} and event_type = 'GroupCreated'`;
/** For recomputing every user of the projects: each exclusively, and the namespaces whose members reach them. */
const wholeProjects = (projects: RawBuilder<unknown>): Keys => sql`
  select ${PROJECT_LOCK}::integer, id, true from (${projects}) p(id)
  union all select ${NAMESPACE_LOCK}::integer, unnest(traversal_ids), false from projects where id in (${projects})
  union all ${ancestorsOf(sql`select group_id from project_group_links where project_id in (${projects})`)}`;
const wholeProject = (projectId: number) => wholeProjects(sql`select ${projectId}::integer`);

async function lock(trx: Db, ...keys: Keys[]) {
  // Each key once, exclusively if any asks so, in the order of the keys.
  await sql`select case when x then pg_advisory_xact_lock(c, k) else pg_advisory_xact_lock_shared(c, k) end from (
    select c, k, bool_or(x) as x from (${sql.join(keys, sql` union all `)}) keys(c, k, x) where k is not null group by c, k order by c, k) y`.execute(trx);
}

// ───────────────────────────── Recomputing ─────────────────────────────

/** A subquery of one integer column: the ids of the projects or groups to recompute. */
type Ids = RawBuilder<unknown>;

const ids = (...values: number[]): Ids => sql`select unnest(${values}::integer[])`;
const groupSubtree = (groupId: number): Ids => sql`select id from namespaces where traversal_ids && array[${groupId}]::integer[]`;
const subtreeProjects = (groupId: number): Ids => sql`select id from projects where traversal_ids && array[${groupId}]::integer[]`;
/** Projects shared with a group of the subtree: its members (and their ancestors') come in through the share. */
const projectsSharedWithSubtree = (groupId: number): Ids =>
  sql`select l.project_id from project_group_links l join namespaces g on g.id = l.group_id where g.traversal_ids && array[${groupId}]::integer[]`;

const ofUser = (column: string, userId: number | undefined) => (userId === undefined ? sql`true` : sql`${sql.ref(column)} = ${userId}`);

/**
 * The ways in are computed per target: `from targets t cross join lateral (… where … = t.id
 * offset 0)`. The `offset 0` keeps each branch a subquery of its own, planned as lookups by
 * key from one target's row, whatever the planner believes of the tables' sizes. Left to
 * join freely, it started from the user's memberships and the whole namespaces table when
 * its statistics were young (a table filled faster than autovacuum analyzes it, as a bot's
 * 2,000 groups are): 75 ms per group at 400 groups, quadratic as they grow.
 */
const perTarget = (branch: RawBuilder<unknown>) => sql`select x.* from targets t cross join lateral (${branch} offset 0) x`;

/**
 * GitLab 12's Gitlab::ProjectAuthorizations, for the projects in `targets` (and one user,
 * when given): one `(user_id, project_id, access_level, expires_at)` row per way in — the
 * direct project membership; a membership of the project's group or of an ancestor; a
 * membership of a group the project is shared with (or of its ancestor), capped by the
 * share's group_access and ending when either ends; the personal namespace's owner as
 * maintainer.
 */
function projectWaysIn(userId: number | undefined) {
  return sql`
    ${perTarget(sql`select m.user_id, m.source_id as project_id, m.access_level, m.expires_at from members m
     where m.source_type = 'Project' and m.source_id = t.id and ${ofUser('m.user_id', userId)}`)}
    union all
    ${perTarget(sql`select m.user_id, p.id, m.access_level, m.expires_at from projects p
      cross join unnest(p.traversal_ids) a(namespace_id)
      join members m on m.source_type = 'Namespace' and m.source_id = a.namespace_id
     where p.id = t.id and ${ofUser('m.user_id', userId)}`)}
    union all
    ${perTarget(sql`select m.user_id, l.project_id, least(l.group_access, m.access_level), least(l.expires_at, m.expires_at)
      from project_group_links l
      join namespaces g on g.id = l.group_id
      cross join unnest(g.traversal_ids) a(namespace_id)
      join members m on m.source_type = 'Namespace' and m.source_id = a.namespace_id
     where l.project_id = t.id and ${ofUser('m.user_id', userId)}`)}
    union all
    ${perTarget(sql`select n.owner_id, p.id, ${sql.lit(ACCESS.MAINTAINER)}, null::date from projects p
      join namespaces n on n.id = p.namespace_id and n.kind = 'user'
     where p.id = t.id and ${ofUser('n.owner_id', userId)}`)}`;
}

/** GitLab 12's Group#max_member_access_for_user: a membership of the group or of an ancestor. */
function groupWaysIn(userId: number | undefined) {
  return perTarget(sql`select m.user_id, d.id as group_id, m.access_level, m.expires_at from namespaces d
      cross join unnest(d.traversal_ids) a(namespace_id)
      join members m on m.source_type = 'Namespace' and m.source_id = a.namespace_id
     where d.kind = 'group' and d.id = t.id and ${ofUser('m.user_id', userId)}`);
}

/** Per level, the latest expiry among its ways in; null (never) wins. */
const LATEST_EXPIRY = sql`case when bool_or(w.expires_at is null) then null else max(w.expires_at) end`;

/**
 * Replaces the rows of `targets` (of one user, when given) in `table` with those the ways in
 * give, one per level with its latest expiry.
 */
async function refresh(trx: Db, table: 'project_authorizations' | 'group_authorizations', targets: Ids, userId: number | undefined) {
  const [target, waysIn] = table === 'project_authorizations' ? ['project_id', projectWaysIn] : ['group_id', groupWaysIn];
  await sql`delete from ${sql.table(table)} where ${sql.ref(target)} in (${targets}) and ${ofUser('user_id', userId)}`.execute(trx);
  await sql`
    insert into ${sql.table(table)} (user_id, ${sql.ref(target)}, access_level, expires_at)
    with targets(id) as materialized (${targets})
    select w.user_id, w.target_id, w.access_level, ${LATEST_EXPIRY}
      from (${waysIn(userId)}) w(user_id, target_id, access_level, expires_at)
     group by w.user_id, w.target_id, w.access_level`.execute(trx);
}

const refreshProjects = (trx: Db, projects: Ids, userId?: number) => refresh(trx, 'project_authorizations', projects, userId);
const refreshGroups = (trx: Db, groups: Ids, userId?: number) => refresh(trx, 'group_authorizations', groups, userId);

/** One user's membership of a group or project changed: their rows on what it reaches. */
async function refreshMember(trx: Db, member: { source_type: MemberSourceType; source_id: number; user_id: number }) {
  const { source_type, source_id, user_id } = member;
  // Its user's rows over a subtree are this write's alone; one project's rows only conflict with a subtree's.
  await lock(trx, key(source_type === 'Project' ? PROJECT_LOCK : NAMESPACE_LOCK, source_id, true), key(USER_LOCK, user_id, source_type !== 'Project'));
  if (source_type === 'Project') return refreshProjects(trx, ids(source_id), user_id);
  await refreshGroups(trx, groupSubtree(source_id), user_id);
  await refreshProjects(trx, sql`${subtreeProjects(source_id)} union ${projectsSharedWithSubtree(source_id)}`, user_id);
}

/**
 * The copy of one share follows project_group_links as it is, whichever of the share's events
 * comes (again): a link deleted and made anew keeps its copy when the older deletion is
 * applied again, and a deleted one gets none back from an older creation.
 */
async function syncLinkCopy(trx: Db, projectId: number, groupId: number) {
  await sql`delete from authorization_group_links a where a.project_id = ${projectId} and a.group_id = ${groupId}
    and not exists (select 1 from project_group_links l where l.project_id = ${projectId} and l.group_id = ${groupId})`.execute(trx);
  await sql`insert into authorization_group_links (group_id, project_id)
    select group_id, project_id from project_group_links where project_id = ${projectId} and group_id = ${groupId}
    on conflict do nothing`.execute(trx);
}

export const authorizationsProjector = defineProjector({
  name: 'authorizations',
  tables: ['project_authorizations', 'group_authorizations', 'authorization_group_links'],
  reads: ['members', 'projects', 'namespaces', 'project_group_links'],
  on: {},
  cascades: {
    MemberAdded: async ({ data }, trx) => refreshMember(trx, data),
    AccessRequestApproved: async ({ data }, trx) => refreshMember(trx, data),
    MemberUpdated: async ({ data }, trx) => refreshMember(trx, data),
    MemberRemoved: async ({ data }, trx) => refreshMember(trx, data),
    ProjectCreated: async ({ data }, trx) => {
      await lock(trx, wholeProject(data.id));
      await refreshProjects(trx, ids(data.id));
    },
    ProjectGroupLinkCreated: async ({ data }, trx) => {
      await lock(trx, wholeProject(data.id), namespaceAndAncestors(data.group_id));
      await syncLinkCopy(trx, data.id, data.group_id);
      await refreshProjects(trx, ids(data.id));
    },
    ProjectGroupLinkDeleted: async ({ data }, trx) => {
      await lock(trx, wholeProject(data.id), namespaceAndAncestors(data.group_id));
      await syncLinkCopy(trx, data.id, data.group_id);
      await refreshProjects(trx, ids(data.id));
    },
    // Projects::TransferService: the ways in through the old namespace go, the new one's come (its row already moved).
    ProjectTransferred: async ({ data }, trx) => {
      await lock(trx, wholeProject(data.id), namespaceAndAncestors(data.previous_namespace_id));
      await refreshProjects(trx, ids(data.id));
    },
    // The groups it was shared with from the projection's copy of its links: the links went with it.
    ProjectDeleted: async ({ data }, trx) => {
      const sharedWith = ancestorsOf(sql`select group_id from authorization_group_links where project_id = ${data.id}`);
      await lock(trx, key(PROJECT_LOCK, data.id, true), namespaceAndAncestors(data.namespace_id), sharedWith);
      await sql`delete from project_authorizations where project_id = ${data.id}`.execute(trx);
      await sql`delete from authorization_group_links where project_id = ${data.id}`.execute(trx);
    },
    GroupCreated: async ({ data }, trx) => {
      await lock(trx, namespaceAndAncestors(data.id));
      await refreshGroups(trx, ids(data.id));
    },
    // A group goes after its projects and subgroups (GitLab's GroupDestroyWorker order), but
    // whatever is left of its subtree is recomputed too; the projects shared with it lose the
    // share's ways in (its links went with it, so the projection's copy names them).
    GroupDeleted: async ({ data }, trx) => {
      await lock(trx, deletedGroupAndAncestors(data.id), wholeProjects(sql`select project_id from authorization_group_links where group_id = ${data.id}`));
      await sql`delete from group_authorizations where group_id = ${data.id}`.execute(trx);
      await refreshGroups(trx, groupSubtree(data.id));
      await refreshProjects(trx, sql`${subtreeProjects(data.id)} union select project_id from authorization_group_links where group_id = ${data.id}`);
      await sql`delete from authorization_group_links where group_id = ${data.id}`.execute(trx);
    },
    UserDeleted: async ({ data }, trx) => {
      await lock(trx, key(USER_LOCK, data.id, true));
      await sql`delete from project_authorizations where user_id = ${data.id}`.execute(trx);
      await sql`delete from group_authorizations where user_id = ${data.id}`.execute(trx);
    },
  },
});
