import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { type ProjectSettings, settingsOf } from '../../domain/projects/settings.js';
import { PROFILE_EDIT_RUNS, userStreamId } from '../../domain/users.js';
import { defineProjector, type Projected } from '../projector.js';
import { COLUMN_SETTINGS, type ProjectsTable } from './tables.js';
import { avatarPath } from '../../domain/uploads.js';

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

/** Moves a project row to the event's version; false when the event was applied already. */
async function advance(trx: Db, v: number, id: number, values: Record<string, unknown> = {}) {
  const result = await trx
    .updateTable('projects')
    .set({ ...values, stream_version: v })
    .where('id', '=', id)
    .where('stream_version', '<', v)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

const archive = async ({ type, data, occurredAt, streamVersion }: Projected<'ProjectArchived' | 'ProjectUnarchived'>, trx: Db) => {
  await advance(trx, streamVersion, data.id, { archived: type === 'ProjectArchived', updated_at: occurredAt.toISOString() });
};

const star = async ({ type, data, occurredAt, streamVersion }: Projected<'ProjectStarred' | 'ProjectUnstarred'>, trx: Db) => {
  const { id, user_id } = data;
  if (!(await advance(trx, streamVersion, id))) return;
  if (type === 'ProjectStarred') {
    await trx
      .insertInto('project_stars')
      .values({ project_id: id, user_id, created_at: occurredAt.toISOString() })
      .onConflict((oc) => oc.columns(['project_id', 'user_id']).doNothing())
      .execute();
  } else {
    await trx.deleteFrom('project_stars').where('project_id', '=', id).where('user_id', '=', user_id).execute();
  }
  await sql`update projects set star_count = (select count(*) from project_stars where project_id = ${id}) where id = ${id}`.execute(trx);
};

/**
 * Inline: the projects API reads what it just wrote. An event of a project stream is applied
 * once: the kernel guards it by the stream version in projects_stream_versions, which outlives
 * the rows (a ProjectCreated or ProjectStarred replayed after ProjectDeleted writes nothing);
 * the rows keep their own stream_version too. What comes from namespaces (paths and names
 * with the namespace, hiding a removed owner's projects) is recomputed from the namespace
 * rows, so replays change nothing. Runs after the groups projector (registry order): renames
 * read the renamed rows.
 */
export const projectsProjector = defineProjector({
  name: 'projects',
  // 2: avatar_sha256 (migration 0051), filled in for the avatars set before it by the rebuild a bump brings.
  // 3: namespace_project_counts (migration 0055), counted for the projects created before it.
  version: 3,
  tables: ['projects', 'project_stars', 'project_group_links', 'namespace_project_counts'],
  // Paths and names come from the namespace rows.
  reads: ['namespaces'],
  // A profile edit that renames nothing changes no project's names.
  mergeRuns: [PROFILE_EDIT_RUNS],
  on: {
    ProjectCreated: async ({ data: d, occurredAt, streamVersion: v }, trx) => {
      const at = occurredAt.toISOString();
      const { columns, rest } = splitSettings(settingsOf(d));
      // From the namespace row, locked: a concurrent rename (an update of the row) either
      // finished before (we see its new path) or waits for this transaction (its cascade then
      // sees this project). `for share`, as createProject's command took it: creations in one
      // namespace share the row, where upgrading to `for update` here deadlocked them (each
      // column's read locks it, so all three see the same version). The event's values when
      // the row is gone. Read inside the INSERT: nothing is read back, so
      // the statement can go out with the append (src/commands/kernel/one-round-trip.ts).
      const ns = (column: 'full_path' | 'full_name' | 'traversal_ids') => sql`(select ${sql.ref(column)} from namespaces where id = ${d.namespace_id} for share)`;
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
          path_with_namespace: sql`coalesce(${ns('full_path')} || '/' || ${d.path}::text, ${d.path_with_namespace}::text)`,
          name_with_namespace: sql`coalesce(${ns('full_name')} || ' / ' || ${d.name}::text, ${d.name_with_namespace}::text)`,
          traversal_ids: sql`coalesce(${ns('traversal_ids')}, ${[...d.traversal_ids]}::integer[])`,
          default_branch: d.default_branch,
          archived: false,
          star_count: 0,
          forks_count: 0,
          open_issues_count: 0,
          avatar_url: null,
          avatar_sha256: null,
          forked_from_project_id: null,
          settings: JSON.stringify({ ...rest, readme: d.readme }),
          pending_delete: false,
          created_at: at,
          last_activity_at: at,
          updated_at: at,
          stream_version: v,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      // Written without reading: the creation still goes out with its append.
      await sql`insert into namespace_project_counts as c (namespace_id, projects) values (${d.namespace_id}, 1)
                on conflict (namespace_id) do update set projects = c.projects + 1`.execute(trx);
    },
    ProjectUpdated: async ({ data, occurredAt, streamVersion }, trx) => {
      const { id, changes } = data;
      const { default_branch, ...settings } = changes;
      const { columns, rest } = splitSettings(settings);
      const values: Record<string, unknown> = { ...columns, updated_at: occurredAt.toISOString() };
      if (default_branch !== undefined) values.default_branch = default_branch;
      if (Object.keys(rest).length > 0) values.settings = sql`settings || ${JSON.stringify(rest)}::jsonb`;
      // SET expressions see the row before the update: swap the last segment only.
      if (settings.path !== undefined) {
        values.path_with_namespace = sql`left(path_with_namespace, length(path_with_namespace) - length(path)) || ${settings.path}`;
      }
      if (settings.name !== undefined) {
        values.name_with_namespace = sql`left(name_with_namespace, length(name_with_namespace) - length(name)) || ${settings.name}`;
      }
      await advance(trx, streamVersion, id, values);
    },
    ProjectArchived: archive,
    ProjectUnarchived: archive,
    ProjectStarred: star,
    ProjectUnstarred: star,
    ProjectDeletionScheduled: async ({ data, occurredAt, streamVersion }, trx) => {
      await uncount(trx, sql<SqlBool>`id = ${data.id} and stream_version < ${streamVersion}`);
      await advance(trx, streamVersion, data.id, { pending_delete: true, updated_at: occurredAt.toISOString() });
    },
    ProjectAvatarChanged: async ({ data, occurredAt, streamVersion }, trx) => {
      const { id, avatar } = data;
      // The path only (the API puts the instance's URL before it), and the upload it serves.
      await advance(trx, streamVersion, id, { avatar_url: avatarPath('project', id, avatar.filename), avatar_sha256: avatar.sha256, updated_at: occurredAt.toISOString() });
    },
    ProjectGroupLinkCreated: async ({ data, occurredAt, streamVersion }, trx) => {
      const { id, link_id, group_id, group_access, expires_at } = data;
      if (!(await advance(trx, streamVersion, id))) return;
      await trx
        .insertInto('project_group_links')
        .values({ id: link_id, project_id: id, group_id, group_access, expires_at, created_at: occurredAt.toISOString() })
        .onConflict((oc) => oc.columns(['project_id', 'group_id']).doNothing())
        .execute();
    },
    ProjectGroupLinkDeleted: async ({ data, streamVersion }, trx) => {
      if (!(await advance(trx, streamVersion, data.id))) return;
      await trx.deleteFrom('project_group_links').where('project_id', '=', data.id).where('group_id', '=', data.group_id).execute();
    },
    ProjectForkLinked: async ({ data, streamVersion }, trx) => {
      if (!(await advance(trx, streamVersion, data.id, { forked_from_project_id: data.forked_from_project_id }))) return;
      await countForks(trx, data.forked_from_project_id);
    },
    ProjectForkUnlinked: async ({ data, streamVersion }, trx) => {
      if (!(await advance(trx, streamVersion, data.id, { forked_from_project_id: null }))) return;
      await countForks(trx, data.forked_from_project_id);
    },
    ProjectTransferred: async ({ data: d, occurredAt, streamVersion }, trx) => {
      // The namespace moves its count only if the project is still counted (not pending deletion).
      await sql`update namespace_project_counts set projects = projects - 1
                 where namespace_id = ${d.previous_namespace_id} and exists (select 1 from projects where id = ${d.id} and not pending_delete and stream_version < ${streamVersion})`.execute(trx);
      await sql`insert into namespace_project_counts as c (namespace_id, projects)
                select ${d.namespace_id}, 1 from projects where id = ${d.id} and not pending_delete and stream_version < ${streamVersion}
                on conflict (namespace_id) do update set projects = c.projects + 1`.execute(trx);
      // Paths and names from the namespace row as it is now (a rename since is in it), the event's when it is gone.
      const ns = (column: 'full_path' | 'full_name' | 'traversal_ids') => sql`(select ${sql.ref(column)} from namespaces where id = ${d.namespace_id})`;
      await advance(trx, streamVersion, d.id, {
        namespace_id: d.namespace_id,
        path_with_namespace: sql`coalesce(${ns('full_path')} || '/' || path, ${d.path_with_namespace}::text)`,
        name_with_namespace: sql`coalesce(${ns('full_name')} || ' / ' || name, ${d.name_with_namespace}::text)`,
        traversal_ids: sql`coalesce(${ns('traversal_ids')}, ${[...d.traversal_ids]}::integer[])`,
        ...(d.visibility === null ? {} : { visibility: d.visibility }),
        updated_at: occurredAt.toISOString(),
      });
    },
    ProjectDeleted: async ({ data }, trx) => {
      const { id } = data;
      // A fork leaves its source's count.
      await sql`update projects s set forks_count = (select count(*) from projects f where f.forked_from_project_id = s.id and f.id <> ${id})
                 where s.id = (select forked_from_project_id from projects where id = ${id})`.execute(trx);
      await uncount(trx, sql<SqlBool>`id = ${id}`);
      await trx.deleteFrom('project_stars').where('project_id', '=', id).execute();
      await trx.deleteFrom('project_group_links').where('project_id', '=', id).execute();
      await trx.deleteFrom('projects').where('id', '=', id).execute();
    },
  },
  // Other areas' events that move projects' paths or hide them: applied every time, recomputed from the rows.
  cascades: {
    // GitLab: project_group_links.group_id references namespaces on delete cascade.
    GroupDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('project_group_links').where('group_id', '=', data.id).execute();
      await trx.deleteFrom('namespace_project_counts').where('namespace_id', '=', data.id).execute();
    },
    GroupUpdated: async ({ data }, trx) => {
      const { id, changes } = data;
      if (changes.path === undefined && changes.name === undefined) return;
      await recomputeNamespacedNames(trx, sql<SqlBool>`p.traversal_ids && array[${id}]::integer[]`);
    },
    UserProfileUpdated: async ({ data }, trx) => {
      const { id, changes } = data;
      if (changes.username === undefined && changes.name === undefined) return;
      await recomputeNamespacedNames(trx, sql<SqlBool>`p.namespace_id in (select id from namespaces where kind = 'user' and owner_id = ${id})`);
    },
    // GitLab: a group being removed hides its projects at once.
    GroupDeletionScheduled: async ({ data }, trx) => hide(trx, sql<SqlBool>`traversal_ids && array[${data.id}]::integer[]`),
    // GitLab (Users::DestroyService): a removed user's personal projects go with them. The
    // namespace id comes from the log, so this holds whatever order projectors run in.
    UserDeleted: async ({ data }, trx) => {
      const namespaceId = sql<number>`(select (data->>'namespace_id')::integer from events where stream_id = ${userStreamId(data.id)} and event_type = 'UserCreated' limit 1)`;
      await hide(trx, sql<SqlBool>`namespace_id = ${namespaceId}`);
      await sql`delete from namespace_project_counts where namespace_id = ${namespaceId}`.execute(trx);
    },
    // GitLab (Git::BranchPushService#update_default_branch?): the first branch pushed to an
    // empty repository becomes its HEAD, the project's default branch.
    BranchCreated: async ({ data }, trx) =>
      trx.updateTable('projects').set({ default_branch: data.branch }).where('id', '=', data.project_id).where('default_branch', 'is', null).execute(),
  },
});

/** GitLab's ForksCountService: the projects that name `sourceId` as the one they were forked from. */
async function countForks(trx: Db, sourceId: number) {
  await sql`update projects set forks_count = (select count(*) from projects where forked_from_project_id = ${sourceId}) where id = ${sourceId}`.execute(trx);
}

/** Takes the projects `which` names that are not pending deletion out of their namespaces' counts (before they are hidden or removed). */
async function uncount(trx: Db, which: Expression<SqlBool>) {
  await sql`
    update namespace_project_counts c set projects = c.projects - gone.n
      from (select namespace_id, count(*)::integer as n from projects where ${which} and not pending_delete group by namespace_id) gone
     where c.namespace_id = gone.namespace_id`.execute(trx);
}

/**
 * Marks the projects `which` names pending deletion, and takes those it marks out of their
 * namespaces' counts in the same statement: on a replay it marks none and counts nothing.
 */
async function hide(trx: Db, which: Expression<SqlBool>) {
  await sql`
    with hidden as (update projects set pending_delete = true where ${which} and not pending_delete returning namespace_id)
    update namespace_project_counts c set projects = c.projects - gone.n
      from (select namespace_id, count(*)::integer as n from hidden group by namespace_id) gone
     where c.namespace_id = gone.namespace_id`.execute(trx);
}

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
