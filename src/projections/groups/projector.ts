import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { groupEvents, type GroupEvent } from '../../domain/groups/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { REPLAY_GUARD, claimStreamVersion } from '../stream-versions.js';
import { insertPersonalNamespaces, PERSONAL_NAMESPACE_EVENT_TYPES, projectPersonalNamespace, type PersonalNamespaceEvent } from './personal-namespaces.js';
import type { NamespaceRow } from './tables.js';
import { avatarPath } from '../../domain/uploads.js';

const VERSIONS = 'namespaces_stream_versions';

/**
 * Personal namespaces (from the user stream) and groups (from group streams). Every event is
 * applied once: guarded by its stream version in namespaces_stream_versions, which outlives
 * the rows (a GroupCreated or GroupCustomAttributeSet replayed after GroupDeleted writes
 * nothing); a group's row keeps its own stream_version too. What cascades to descendants
 * (full path and name, pending deletion, the sharing lock) is recomputed from the rows.
 */
export const groupsProjector: Projector = {
  // Stored: the projection's checkpoint and its namespaces_stream_versions table carry this name.
  name: 'namespaces',
  // 2: avatar_sha256 (migration 0051), filled in for the avatars set before it by the rebuild a bump brings.
  version: 2,
  mode: 'inline',
  handles: [...PERSONAL_NAMESPACE_EVENT_TYPES, ...eventTypesOf(groupEvents)],
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
  const event = stored as unknown as (PersonalNamespaceEvent | GroupEvent) & ProjectedEvent;
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
    case 'UserCreated':
    case 'UserProfileUpdated':
    case 'UserDeleted':
      return projectPersonalNamespace(event, trx);
    case 'GroupCreated': {
      const { id, parent_id, traversal_ids, full_path, full_name, ...settings } = event.data;
      // The parent's row, locked: a concurrent rename, lock or deletion of the parent (an update
      // of its row) either finished before (we see its new state) or waits for us (its cascade
      // then sees this row). `for share`, as createGroup's command took it: creations under one
      // parent share the row, where upgrading to `for update` here deadlocked them.
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
          avatar_sha256: null,
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
    case 'GroupAvatarChanged': {
      const { id, avatar } = event.data;
      // The path only (the API puts the instance's URL before it), and the upload it serves.
      await advance(id, { avatar_url: avatarPath('group', id, avatar.filename), avatar_sha256: avatar.sha256, updated_at: at });
      return;
    }
    default:
      return unhandled(event);
  }
}

async function lockedRow(trx: Db, id: number) {
  const { rows } = await sql<Pick<NamespaceRow, 'traversal_ids' | 'full_path' | 'full_name' | 'share_with_group_lock' | 'pending_delete'>>`
    select traversal_ids, full_path, full_name, share_with_group_lock, pending_delete from namespaces where id = ${id} for share`.execute(trx);
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
