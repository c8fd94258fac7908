import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { Visibility } from '../../domain/access.js';
import type { UserEvent } from '../../domain/users.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projected } from '../projector.js';
import { recordset } from '../recordset.js';

/**
 * Every user has a personal namespace (kind 'user', GitLab's `Namespace` owned by the user):
 * the groups projection keeps it from the user's stream (UserCreated, UserProfileUpdated,
 * UserDeleted), guarded by the same stream versions.
 */

/** A user's rename renames their namespace. */
export async function renamePersonalNamespace({ data, occurredAt, streamVersion: v }: Projected<'UserProfileUpdated'>, trx: Db): Promise<void> {
  const { username, name } = data.changes;
  if (username === undefined && name === undefined) return;
  await trx
    .updateTable('namespaces')
    .set({
      ...(username !== undefined ? { path: username, full_path: username } : {}),
      ...(name !== undefined ? { name, full_name: name } : {}),
      updated_at: occurredAt.toISOString(),
      stream_version: v,
    })
    .where('kind', '=', 'user')
    .where('owner_id', '=', data.id)
    .where('stream_version', '<', v)
    .execute();
}

export async function deletePersonalNamespace({ data }: Projected<'UserDeleted'>, trx: Db): Promise<void> {
  await trx.deleteFrom('namespaces').where('kind', '=', 'user').where('owner_id', '=', data.id).execute();
}

/** Personal namespaces of new users (idempotent: an existing id is left alone). */
export async function insertPersonalNamespaces(trx: Db, events: readonly ProjectedEvent[]) {
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
  avatar_sha256: null,
  file_template_project_id: null,
  shared_runners_minutes_limit: null,
  extra_shared_runners_minutes_limit: null,
  runners_token: null,
  pending_delete: false,
};
