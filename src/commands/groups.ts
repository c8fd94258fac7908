import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { ACCESS, restrictedVisibilityError, type Viewer } from '../domain/access.js';
import { can } from '../domain/policy/can.js';
import { notFound } from '../domain/errors.js';
import { type GroupCommand, type GroupState } from '../domain/groups/decider.js';
import { type GroupEvent } from '../domain/groups/events.js';
import type { GroupChanges, GroupSettings } from '../domain/groups/settings.js';
import type { StoredEvent } from '../eventstore/types.js';
import { groupAccessLevelOf } from '../projections/access.js';
import { findGroupRow, groupSubtree, lockNamespaceRow, mostVisibleProject, namespaceUnchanged, mostVisibleSubgroup, toParentGroup } from '../projections/groups/facts.js';
import type { NamespaceRow } from '../projections/groups/tables.js';
import { DEFAULT_SETTINGS } from '../domain/application-settings/attributes.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { handleCommands } from './kernel/handler.js';
import { firstMember, members } from '../domain/members.js';
import { causedBy } from './kernel/causation.js';
import { type PendingUpload, withUpload } from './uploads.js';
import { projects } from '../domain/projects/aggregate.js';
import { newId, spec, run } from './kernel/run.js';
import type { CommandContext, CommandResult, Writer } from './kernel/context.js';
import { groups } from '../domain/groups/aggregate.js';
import type { Reactor } from './kernel/reactor.js';

/** A new group's settings before the caller's: GitLab 12's column defaults and instance defaults. */
/** A new group's settings before the caller's (createGroup takes the visibility from the instance's current settings). */
export const DEFAULT_GROUP_SETTINGS: Omit<GroupSettings, 'name' | 'path'> = {
  description: '',
  visibility: DEFAULT_SETTINGS.default_group_visibility as GroupSettings['visibility'],
  share_with_group_lock: false,
  require_two_factor_authentication: false,
  two_factor_grace_period: 48,
  // GitLab: Gitlab::CurrentSettings.default_project_creation (developers and maintainers).
  project_creation_level: 'developer',
  auto_devops_enabled: null,
  subgroup_creation_level: 'maintainer',
  emails_disabled: null,
  mentions_disabled: null,
  lfs_enabled: true,
  request_access_enabled: true,
  file_template_project_id: null,
  shared_runners_minutes_limit: null,
  extra_shared_runners_minutes_limit: null,
};

export interface CreateGroupInput {
  readonly settings: Pick<GroupSettings, 'name' | 'path'> & Partial<GroupSettings>;
  /** The parent group's row (the caller has been authorized to create subgroups in it). */
  readonly parent: NamespaceRow | null;
  /** Becomes the group's first owner, in the same transaction. */
  /** The creator, who becomes the group's owner. */
  readonly creator: Pick<Viewer, 'id' | 'isAdmin'>;
  /** The avatar, checked (src/commands/uploads.ts); stored with the group's events. */
  readonly avatar?: PendingUpload | undefined;
}

/** What a subgroup's creation decides on of its parent (toParentGroup), and that it is a group. */
const PARENT_FACTS = ['kind', 'visibility', 'full_path', 'full_name', 'traversal_ids', 'share_with_group_lock'] as const;

/** Creates a group and its creator's owner membership atomically. */
export async function createGroup(w: Writer, input: CreateGroupInput): Promise<CommandResult<GroupState>> {
  const [id, instance] = await Promise.all([newId(w, groups), currentSettings(w.ctx.db)]);
  // GitLab (Groups::CreateService#set_visibility_level): Gitlab::CurrentSettings.default_group_visibility when not given;
  // then a level the instance restricts is refused before anything else.
  const visibility = input.settings.visibility ?? (instance.default_group_visibility as GroupSettings['visibility']);
  const restricted = restrictedVisibilityError(visibility, instance.restricted_visibility_levels as string[], input.creator.isAdmin);
  if (restricted) throw restricted;
  const settings: GroupSettings = { ...DEFAULT_GROUP_SETTINGS, visibility, ...input.settings };
  const decide = (parent: NamespaceRow | null): GroupCommand => ({
    type: 'CreateGroup',
    settings,
    parent: parent ? toParentGroup(parent) : null,
    avatar: input.avatar?.ref,
  });
  // The parent as the transaction finds it (its visibility bounds the new group's), locked
  // against a concurrent change or removal until the commit. Or, in one round trip, as the
  // caller read it, if the transaction finds it unchanged: without it, the owner's
  // membership would hold the creator's authorization lock (src/projections/authorizations)
  // across every round trip of the transaction, and one user's groups would be created one
  // after another.
  const { parent } = input;
  const command: GroupCommand | ((trx: Db) => Promise<GroupCommand>) =
    parent === null
      ? decide(null)
      : async (trx) => {
          const row = await lockNamespaceRow(trx, parent.id, 'share');
          if (!row || row.kind !== 'group' || row.pending_delete) throw notFound('Group');
          return decide(row);
        };
  const optimistic =
    input.avatar || parent === null || parent.kind !== 'group' || parent.pending_delete
      ? undefined
      : { command: decide(parent), unchanged: namespaceUnchanged(w.ctx.db, parent, PARENT_FACTS) };
  const owner = firstMember(input.creator.id, ACCESS.OWNER, w.metadata.actor_id ?? null);
  const newStream = { newStream: true };
  const [group] = await handleCommands(w, [
    spec(groups, id, withUpload(input.avatar, command), { ...newStream, optimistic }),
    spec(members, { type: 'Namespace', id }, owner, newStream),
  ]);
  return group as CommandResult<GroupState>;
}

/** Applies changed settings (owner or admin, checked by the caller). */
export async function updateGroup(w: Writer, group: NamespaceRow, changes: GroupChanges, viewer: Viewer, avatar?: PendingUpload) {
  // Groups::UpdateService: a new visibility the instance restricts is refused first.
  if (changes.visibility !== undefined && changes.visibility !== group.visibility) {
    const restricted = restrictedVisibilityError(changes.visibility, (await currentSettings(w.ctx.db)).restricted_visibility_levels as string[], viewer.isAdmin);
    if (restricted) throw restricted;
  }
  // Read in the write transaction: when the visibility changes, the group's row first,
  // locked for update, so a subgroup or project being created under it (which locks the row
  // to read its visibility) is either committed and counted here, or waits; then the parent.
  const command = async (trx: Db): Promise<GroupCommand> => {
    const current = changes.visibility === undefined ? group : ((await lockNamespaceRow(trx, group.id, 'update')) ?? group);
    const parentRow = current.parent_id === null ? undefined : await lockNamespaceRow(trx, current.parent_id, 'share');
    return {
      type: 'UpdateGroup',
      changes,
      parent: parentRow ? toParentGroup(parentRow) : null,
      childGroupVisibility: changes.visibility === undefined ? null : await mostVisibleSubgroup(trx, group.id),
      projectVisibility: changes.visibility === undefined ? null : await mostVisibleProject(trx, group.id),
      mayUnlockShareWithGroupLock: changes.share_with_group_lock === false ? await mayChangeShareLock(trx, viewer, parentRow) : true,
      currentShareWithGroupLock: current.share_with_group_lock,
      avatar: avatar?.ref,
    };
  };
  return run(w, groups, group.id, withUpload(avatar, command));
}

/**
 * GitLab's change_share_with_group_lock on the parent: its owner may, unless the parent is
 * itself locked by its own parent, whose owner must then (and so on up).
 */
async function mayChangeShareLock(db: Db, viewer: Viewer, parent: NamespaceRow | undefined): Promise<boolean> {
  if (!parent || !parent.share_with_group_lock) return true;
  if (!can({ kind: 'group', viewer, role: await groupAccessLevelOf(db, viewer, parent.id), group: parent }, 'admin_group')) return false;
  const grandparent = parent.parent_id === null ? undefined : await findGroupRow(db, parent.parent_id);
  if (!grandparent?.share_with_group_lock) return true;
  return mayChangeShareLock(db, viewer, grandparent);
}

// ───────────────────────────── Asynchronous removal ─────────────────────────────

/**
 * GitLab's GroupDestroyWorker: removes the projects of the subtree, then every group of it,
 * deepest first. Idempotent: a group already gone appends nothing, and the runner keeps a
 * receipt per triggering event.
 */
export const groupRemovalReactor: Reactor = {
  name: 'group-removal',
  handles: ['GroupDeletionScheduled'] satisfies GroupEvent['type'][],
  async react(event: StoredEvent, ctx: CommandContext) {
    const { id } = event.data as Extract<GroupEvent, { type: 'GroupDeletionScheduled' }>['data'];
    const w = causedBy(ctx, event);
    await removeSubtreeProjects(w, id);
    for (const group of await groupSubtree(ctx.db, id)) {
      await run(w, groups, group.id, { type: 'DeleteGroup', fullPath: group.full_path });
    }
  },
};

async function removeSubtreeProjects(w: Writer, groupId: number) {
  const { rows } = await sql<{ id: number }>`select id from projects where traversal_ids && array[${groupId}]::integer[] order by id`.execute(w.ctx.db);
  for (const { id } of rows) await run(w, projects, id, { type: 'DeleteProject' });
}
