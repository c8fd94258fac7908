import type { Visibility } from '../access.js';
import { allowedUnder } from '../access.js';
import { type Decider, unhandled } from '../decider.js';
import { conflict, notFound, recordNotFound } from '../errors.js';
import { validateCustomAttribute } from '../users.js';
import { sameUpload, type UploadRef } from '../uploads.js';
import type { GroupEvent } from './events.js';
import { changedSettings, type GroupChanges, type GroupSettings, joinName, joinPath, type ParentGroup, validateSettings } from './settings.js';

/** One aggregate per group, keyed by the group's id: stream `group-<id>`. */
export const groupStreamId = (id: number) => `group-${id}`;

// ───────────────────────────── State ─────────────────────────────

export interface GroupState {
  readonly id: number;
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly pendingDelete: boolean;
  readonly parentId: number | null;
  readonly settings: GroupSettings | null;
  readonly customAttributes: ReadonlyMap<string, string>;
  /** The uploaded avatar, if any. */
  readonly avatar: UploadRef | null;
}

// ───────────────────────────── Commands ─────────────────────────────

export type GroupCommand =
  | { readonly type: 'CreateGroup'; readonly settings: GroupSettings; readonly parent: ParentGroup | null; readonly avatar?: UploadRef | undefined }
  | {
      readonly type: 'UpdateGroup';
      readonly changes: GroupChanges;
      /** A new avatar (its bytes stored beside the events, in the same transaction). */
      readonly avatar?: UploadRef | undefined;
      readonly parent: ParentGroup | null;
      /** The most visible direct subgroup and direct project (GitLab validates against both). */
      readonly childGroupVisibility: Visibility | null;
      readonly projectVisibility: Visibility | null;
      /** GitLab's change_share_with_group_lock: false when a locked parent's owner must do it. */
      readonly mayUnlockShareWithGroupLock: boolean;
      /** The lock as it is now: locking a group also locks its descendants (their streams do not know). */
      readonly currentShareWithGroupLock: boolean;
    }
  /** `fullPath`: the group's current full path (its ancestors may have been renamed since). */
  | { readonly type: 'ScheduleGroupDeletion'; readonly fullPath: string }
  | { readonly type: 'DeleteGroup'; readonly fullPath: string }
  | { readonly type: 'SetGroupCustomAttribute'; readonly key: string; readonly value: string }
  | { readonly type: 'DeleteGroupCustomAttribute'; readonly key: string };

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): GroupState => ({
  id,
  exists: false,
  deleted: false,
  pendingDelete: false,
  parentId: null,
  settings: null,
  customAttributes: new Map(),
  avatar: null,
});

function evolve(state: GroupState, event: GroupEvent): GroupState {
  switch (event.type) {
    case 'GroupCreated': {
      const { id: _id, parent_id, traversal_ids: _t, full_path: _p, full_name: _n, ...settings } = event.data;
      return { ...state, exists: true, parentId: parent_id, settings };
    }
    case 'GroupUpdated':
      return { ...state, settings: { ...state.settings!, ...event.data.changes } };
    case 'GroupDeletionScheduled':
      return { ...state, pendingDelete: true };
    case 'GroupDeleted':
      return { ...state, exists: false, deleted: true, pendingDelete: false };
    case 'GroupCustomAttributeSet': {
      const customAttributes = new Map(state.customAttributes);
      customAttributes.set(event.data.key, event.data.value);
      return { ...state, customAttributes };
    }
    case 'GroupCustomAttributeDeleted': {
      const customAttributes = new Map(state.customAttributes);
      customAttributes.delete(event.data.key);
      return { ...state, customAttributes };
    }
    case 'GroupAvatarChanged':
      return { ...state, avatar: event.data.avatar };
    default:
      return state;
  }
}

function decide(command: GroupCommand, state: GroupState): GroupEvent[] {
  const { id } = state;
  if (command.type === 'CreateGroup') {
    if (state.exists || state.deleted) throw conflict('Group already exists');
    const { parent } = command;
    // GitLab: Namespace#sync_share_with_group_lock_with_parent.
    const settings: GroupSettings = parent?.share_with_group_lock ? { ...command.settings, share_with_group_lock: true } : command.settings;
    validateSettings(settings, parent);
    return [
      {
        type: 'GroupCreated',
        data: {
          id,
          parent_id: parent?.id ?? null,
          traversal_ids: [...(parent?.traversal_ids ?? []), id],
          full_path: joinPath(parent, settings.path),
          full_name: joinName(parent, settings.name),
          ...settings,
        },
      },
      ...avatarChange(id, null, command.avatar),
    ];
  }
  // DeleteGroup is how the removal reactor finishes: a group already gone needs nothing.
  if (command.type === 'DeleteGroup') {
    if (!state.exists) return [];
    return [{ type: 'GroupDeleted', data: { id, full_path: command.fullPath } }];
  }
  if (!state.exists || !state.settings || state.pendingDelete) throw notFound('Group');
  switch (command.type) {
    case 'UpdateGroup':
      return [
        ...update(id, { ...state.settings, share_with_group_lock: command.currentShareWithGroupLock }, command),
        ...avatarChange(id, state.avatar, command.avatar),
      ];
    case 'ScheduleGroupDeletion':
      return [{ type: 'GroupDeletionScheduled', data: { id, full_path: command.fullPath } }];
    case 'SetGroupCustomAttribute':
      validateCustomAttribute(command.key, command.value);
      if (state.customAttributes.get(command.key) === command.value) return [];
      return [{ type: 'GroupCustomAttributeSet', data: { id, key: command.key, value: command.value } }];
    case 'DeleteGroupCustomAttribute':
      if (!state.customAttributes.has(command.key)) throw recordNotFound('Custom Attribute');
      return [{ type: 'GroupCustomAttributeDeleted', data: { id, key: command.key } }];
    default:
      return unhandled(command);
  }
}

function update(id: number, current: GroupSettings, command: Extract<GroupCommand, { type: 'UpdateGroup' }>): GroupEvent[] {
  const changes = changedSettings(current, command.changes);
  if (Object.keys(changes).length === 0) return [];
  const next: GroupSettings = { ...current, ...changes };
  validateSettings(next, command.parent, (errors) => {
    const add = (field: string, message: string) => (errors[field] ??= []).push(message);
    // GitLab: Group#visibility_level_allowed_by_projects / _by_sub_groups.
    if (command.projectVisibility && !allowedUnder(command.projectVisibility, next.visibility)) {
      add('visibility_level', `${next.visibility} is not allowed since this group contains projects with higher visibility.`);
    }
    if (command.childGroupVisibility && !allowedUnder(command.childGroupVisibility, next.visibility)) {
      add('visibility_level', `${next.visibility} is not allowed since there are sub-groups with higher visibility.`);
    }
    // GitLab: Groups::UpdateService#valid_share_with_group_lock_change?
    if (changes.share_with_group_lock === false && !command.mayUnlockShareWithGroupLock) {
      add('share_with_group_lock', 'cannot be disabled when the parent group "Share with group lock" is enabled, except by the owner of the parent group');
    }
  });
  const renamed = changes.path !== undefined || changes.name !== undefined;
  return [
    {
      type: 'GroupUpdated',
      data: {
        id,
        changes,
        full_path: joinPath(command.parent, next.path),
        full_name: joinName(command.parent, next.name),
        ...(renamed ? { previous_full_path: joinPath(command.parent, current.path), previous_full_name: joinName(command.parent, current.name) } : {}),
        previous_visibility: changes.visibility !== undefined ? current.visibility : null,
      },
    },
  ];
}

/** A new avatar, unless it is the one the group has (same bytes, same name). */
const avatarChange = (id: number, current: UploadRef | null, avatar: UploadRef | undefined): GroupEvent[] =>
  avatar && !sameUpload(current, avatar) ? [{ type: 'GroupAvatarChanged', data: { id, avatar } }] : [];

export const groupDecider: Decider<GroupCommand, GroupEvent, GroupState, number> = { initialState, evolve, decide };
