import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import { PROFILE_EDIT_RUNS } from '../../domain/users.js';
import { defineProjector, type Handlers } from '../projector.js';
import { deletePersonalNamespace, insertPersonalNamespaces, renamePersonalNamespace } from './personal-namespaces.js';
import { avatarPath } from '../../domain/uploads.js';


/** Moves a group row to the event's version; false when the event was applied already. */
async function advance(trx: Db, v: number, id: number, values: Record<string, unknown> = {}) {
  const result = await trx
    .updateTable('namespaces')
    .set({ ...values, stream_version: v })
    .where('id', '=', id)
    .where('kind', '=', 'group')
    .where('stream_version', '<', v)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** What each event does, once it is known to be new to the projection (the kernel or the batch path checked its stream version). */
const on: Handlers = {
  UserCreated: async (event, trx) => insertPersonalNamespaces(trx, [event]),
  UserProfileUpdated: renamePersonalNamespace,
  UserDeleted: deletePersonalNamespace,
  GroupCreated: async ({ data, occurredAt, streamVersion: v }, trx) => {
    const at = occurredAt.toISOString();
    const { id, parent_id, traversal_ids, full_path, full_name, ...settings } = data;
    // From the parent's row, locked: a concurrent rename, lock or deletion of the parent (an
    // update of its row) either finished before (we see its new state) or waits for us (its
    // cascade then sees this row). `for share`, as createGroup's command took it: creations
    // under one parent share the row, where upgrading to `for update` here deadlocked them.
    // The event's values when there is no parent row. Read inside the INSERT: nothing is read
    // back, so the statement can go out with the append (src/commands/kernel/one-round-trip.ts).
    const fromParent = <T>(column: RawBuilder<unknown>, orElse: T | RawBuilder<T>) =>
      parent_id === null ? orElse : sql<T>`coalesce((select ${column} from namespaces where id = ${parent_id} for share), ${orElse})`;
    await trx
      .insertInto('namespaces')
      .values({
        ...settings,
        share_with_group_lock: settings.share_with_group_lock || fromParent(sql`share_with_group_lock`, false),
        id,
        kind: 'group',
        parent_id,
        owner_id: null,
        traversal_ids: fromParent(sql`traversal_ids || ${id}::integer`, sql<number[]>`${[...traversal_ids]}::integer[]`),
        full_path: fromParent(sql`full_path || '/' || ${settings.path}::text`, full_path),
        full_name: fromParent(sql`full_name || ' / ' || ${settings.name}::text`, full_name),
        avatar_url: null,
        avatar_sha256: null,
        runners_token: null,
        pending_delete: fromParent(sql`pending_delete`, false),
        created_at: at,
        updated_at: at,
        stream_version: v,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  },
  GroupUpdated: async ({ data, occurredAt, streamVersion }, trx) => {
    const { id, changes } = data;
    if (!(await advance(trx, streamVersion, id, { ...changes, updated_at: occurredAt.toISOString() }))) return;
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
  },
  GroupDeletionScheduled: async ({ data, occurredAt, streamVersion }, trx) => {
    const { id } = data;
    // The group's own row first: it waits for a subgroup being created under it (which
    // holds the row), so the next statement's snapshot sees that subgroup and marks it.
    if (!(await advance(trx, streamVersion, id, { pending_delete: true, updated_at: occurredAt.toISOString() }))) return;
    await trx.updateTable('namespaces').set({ pending_delete: true }).where(sql<SqlBool>`traversal_ids && array[${id}]::integer[]`).execute();
  },
  GroupDeleted: async ({ data }, trx) => {
    await trx.deleteFrom('group_custom_attributes').where('group_id', '=', data.id).execute();
    await trx.deleteFrom('namespaces').where('id', '=', data.id).where('kind', '=', 'group').execute();
  },
  GroupCustomAttributeSet: async ({ data, occurredAt, streamVersion }, trx) => {
    const at = occurredAt.toISOString();
    const { id, key, value } = data;
    if (!(await advance(trx, streamVersion, id))) return;
    await trx
      .insertInto('group_custom_attributes')
      .values({ group_id: id, key, value, created_at: at, updated_at: at })
      .onConflict((oc) => oc.columns(['group_id', 'key']).doUpdateSet({ value, updated_at: at }))
      .execute();
  },
  GroupCustomAttributeDeleted: async ({ data, streamVersion }, trx) => {
    const { id, key } = data;
    if (!(await advance(trx, streamVersion, id))) return;
    await trx.deleteFrom('group_custom_attributes').where('group_id', '=', id).where('key', '=', key).execute();
  },
  GroupAvatarChanged: async ({ data, occurredAt, streamVersion }, trx) => {
    const { id, avatar } = data;
    // The path only (the API puts the instance's URL before it), and the upload it serves.
    await advance(trx, streamVersion, id, { avatar_url: avatarPath('group', id, avatar.filename), avatar_sha256: avatar.sha256, updated_at: occurredAt.toISOString() });
  },
};

/**
 * Personal namespaces (from the user stream) and groups (from group streams). Every event is
 * applied once: the kernel guards it by its stream version in namespaces_stream_versions, which
 * outlives the rows (a GroupCreated or GroupCustomAttributeSet replayed after GroupDeleted
 * writes nothing); a group's row keeps its own stream_version too. What cascades to
 * descendants (full path and name, pending deletion, the sharing lock) is recomputed from the
 * rows.
 */
export const groupsProjector = defineProjector({
  // Stored: the projection's checkpoint and its namespaces_stream_versions table carry this name.
  name: 'namespaces',
  // 2: avatar_sha256 (migration 0051), filled in for the avatars set before it by the rebuild a bump brings.
  version: 2,
  tables: ['namespaces', 'group_custom_attributes'],
  on,
  // A profile edit that renames nothing changes no personal namespace.
  mergeRuns: [PROFILE_EDIT_RUNS],

  /** Rebuild path: runs of consecutive UserCreated become one multi-row insert. */
  async batch(events, trx, handle) {
    let created: ProjectedEvent[] = [];
    for (const event of events) {
      if (event.type === 'UserCreated') {
        created.push(event);
        continue;
      }
      if (created.length > 0) await insertPersonalNamespaces(trx, created);
      created = [];
      await handle(event);
    }
    if (created.length > 0) await insertPersonalNamespaces(trx, created);
  },
});

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
