import type { Visibility } from './access.js';
import { allowedUnder } from './access.js';
import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { conflict, invalid, notFound, recordNotFound } from './errors.js';
import { validateCustomAttribute } from './users.js';

// ───────────────────────────── Settings ─────────────────────────────

export const PROJECT_CREATION_LEVELS = ['noone', 'maintainer', 'developer'] as const;
export type ProjectCreationLevel = (typeof PROJECT_CREATION_LEVELS)[number];
export const SUBGROUP_CREATION_LEVELS = ['owner', 'maintainer'] as const;
export type SubgroupCreationLevel = (typeof SUBGROUP_CREATION_LEVELS)[number];

/** A group's own settings, named as in GitLab's JSON. */
export interface GroupSettings {
  readonly name: string;
  readonly path: string;
  readonly description: string;
  readonly visibility: Visibility;
  readonly share_with_group_lock: boolean;
  readonly require_two_factor_authentication: boolean;
  readonly two_factor_grace_period: number;
  readonly project_creation_level: ProjectCreationLevel;
  readonly auto_devops_enabled: boolean | null;
  readonly subgroup_creation_level: SubgroupCreationLevel;
  readonly emails_disabled: boolean | null;
  readonly mentions_disabled: boolean | null;
  readonly lfs_enabled: boolean;
  readonly request_access_enabled: boolean;
  readonly file_template_project_id: number | null;
  readonly shared_runners_minutes_limit: number | null;
  readonly extra_shared_runners_minutes_limit: number | null;
}

export type GroupChanges = Partial<GroupSettings>;

/** What a group knows of its parent when it is created or changed (read from the namespaces table). */
export interface ParentGroup {
  readonly id: number;
  readonly visibility: Visibility;
  readonly full_path: string;
  readonly full_name: string;
  readonly traversal_ids: readonly number[];
  readonly share_with_group_lock: boolean;
}

// ───────────────────────────── Events ─────────────────────────────

export type GroupEvent =
  | {
      readonly type: 'GroupCreated';
      readonly data: GroupSettings & {
        readonly id: number;
        readonly parent_id: number | null;
        /** Root first, ending with this group's id. */
        readonly traversal_ids: readonly number[];
        readonly full_path: string;
        readonly full_name: string;
      };
    }
  | {
      readonly type: 'GroupUpdated';
      readonly data: {
        readonly id: number;
        readonly changes: GroupChanges;
        /** The group's full path and name after the change (its descendants' follow). */
        readonly full_path: string;
        readonly full_name: string;
        /** Present when the path or name changed: what descendants' paths and names began with. */
        readonly previous_full_path?: string;
        readonly previous_full_name?: string;
      };
    }
  /** DELETE /groups/:id: the group and its subtree are hidden at once; a reactor removes them. */
  | { readonly type: 'GroupDeletionScheduled'; readonly data: { readonly id: number; readonly full_path: string } }
  | { readonly type: 'GroupDeleted'; readonly data: { readonly id: number; readonly full_path: string } }
  /** GitLab's custom attributes (admin-only key/value pairs on a group). */
  | { readonly type: 'GroupCustomAttributeSet'; readonly data: { readonly id: number; readonly key: string; readonly value: string } }
  | { readonly type: 'GroupCustomAttributeDeleted'; readonly data: { readonly id: number; readonly key: string } };

export type GroupEventType = GroupEvent['type'];
export const GROUP_EVENT_TYPES: readonly GroupEventType[] = [
  'GroupCreated',
  'GroupUpdated',
  'GroupDeletionScheduled',
  'GroupDeleted',
  'GroupCustomAttributeSet',
  'GroupCustomAttributeDeleted',
];

export const groupStreamId = (id: number) => `group-${id}`;

// ───────────────────────────── State ─────────────────────────────

export interface GroupState {
  readonly id: number | null;
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly pendingDelete: boolean;
  readonly parentId: number | null;
  readonly settings: GroupSettings | null;
  readonly customAttributes: ReadonlyMap<string, string>;
}

// ───────────────────────────── Commands ─────────────────────────────

export type GroupCommand =
  | { readonly type: 'CreateGroup'; readonly id: number; readonly settings: GroupSettings; readonly parent: ParentGroup | null }
  | {
      readonly type: 'UpdateGroup';
      readonly changes: GroupChanges;
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

// ───────────────────────────── Validation ─────────────────────────────

// GitLab: Gitlab::PathRegex.namespace_format_regex and its message.
const PATH_FORMAT = /^(?:[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_\-]|[a-zA-Z0-9_])$/;
export const PATH_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";
// GitLab 12: Gitlab::Regex.namespace_name_regex (letters, digits, '_', '.', dashes, spaces).
const NAME_FORMAT = /^[\p{L}\p{M}\p{Nd}\p{Pd}_. ]*$/u;
export const NAME_FORMAT_MESSAGE = "can contain only letters, digits, '_', '.', dash and space.";

// GitLab: Gitlab::PathRegex::TOP_LEVEL_ROUTES — a top-level group may not mask these routes.
const TOP_LEVEL_ROUTES = new Set([
  '-', '.well-known', '@service_worker.js', '404.html', '422.html', '500.html', '502.html', '503.html', 'abuse_reports',
  'admin', 'api', 'apple-touch-icon-precomposed.png', 'apple-touch-icon.png', 'assets', 'autocomplete', 'ci', 'dashboard',
  'deploy.html', 'explore', 'favicon.ico', 'favicon.png', 'files', 'groups', 'health_check', 'help', 'import', 'invites',
  'jwt', 'login', 'notification_settings', 'oauth', 'profile', 'projects', 'public', 'robots.txt', 's', 'search',
  'sent_notifications', 'slash-command-logo.png', 'snippets', 'u', 'unsubscribes', 'uploads', 'users',
]);
// GitLab: ILLEGAL_GROUP_PATH_WORDS (project wildcard routes and group routes) for subgroups.
const SUBGROUP_RESERVED = new Set([
  '-', 'badges', 'blame', 'blob', 'builds', 'commits', 'create', 'create_dir', 'edit', 'files', 'find_file', 'new',
  'preview', 'raw', 'refs', 'tree', 'update', 'wikis',
]);

/** GitLab: Namespace::NUMBER_OF_ANCESTORS_ALLOWED. */
export const MAX_ANCESTORS = 20;

type Errors = Record<string, string[]>;

/**
 * GitLab's Group validations, in the order Rails reports them (name, description, path,
 * parent_id, visibility_level, two_factor_grace_period).
 */
function validate(settings: GroupSettings, parent: ParentGroup | null, extra: (errors: Errors) => void = () => {}): void {
  const errors: Errors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (settings.name.trim() === '') add('name', "can't be blank");
  else if (settings.name.length > 255) add('name', 'is too long (maximum is 255 characters)');
  else if (!NAME_FORMAT.test(settings.name)) add('name', NAME_FORMAT_MESSAGE);
  if (settings.description.length > 255) add('description', 'is too long (maximum is 255 characters)');
  if (settings.path === '') add('path', "can't be blank");
  if (settings.path.length > 255) add('path', 'is too long (maximum is 255 characters)');
  if (!PATH_FORMAT.test(settings.path) || /\.(git|atom)$/i.test(settings.path)) add('path', PATH_FORMAT_MESSAGE);
  else if ((parent ? SUBGROUP_RESERVED : TOP_LEVEL_ROUTES).has(settings.path.toLowerCase())) add('path', `${settings.path} is a reserved name`);
  if (parent && parent.traversal_ids.length > MAX_ANCESTORS) add('parent_id', 'has too deep level of nesting');
  extra(errors);
  if (parent && !allowedUnder(settings.visibility, parent.visibility)) {
    add('visibility_level', `${settings.visibility} is not allowed since the parent group has a ${parent.visibility} visibility.`);
  }
  if (settings.two_factor_grace_period < 0) add('two_factor_grace_period', 'must be greater than or equal to 0');
  if (Object.keys(errors).length > 0) throw invalid(errors);
}

const joinPath = (parent: ParentGroup | null, path: string) => (parent ? `${parent.full_path}/${path}` : path);
const joinName = (parent: ParentGroup | null, name: string) => (parent ? `${parent.full_name} / ${name}` : name);

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (): GroupState => ({
  id: null,
  exists: false,
  deleted: false,
  pendingDelete: false,
  parentId: null,
  settings: null,
  customAttributes: new Map(),
});

function evolve(state: GroupState, event: GroupEvent): GroupState {
  switch (event.type) {
    case 'GroupCreated': {
      const { id, parent_id, traversal_ids: _t, full_path: _p, full_name: _n, ...settings } = event.data;
      return { ...state, id, exists: true, parentId: parent_id, settings };
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
    default:
      return state;
  }
}

function decide(command: GroupCommand, state: GroupState): GroupEvent[] {
  if (command.type === 'CreateGroup') {
    if (state.exists || state.deleted) throw conflict('Group already exists');
    const { parent } = command;
    // GitLab: Namespace#sync_share_with_group_lock_with_parent.
    const settings: GroupSettings = parent?.share_with_group_lock ? { ...command.settings, share_with_group_lock: true } : command.settings;
    validate(settings, parent);
    return [
      {
        type: 'GroupCreated',
        data: {
          id: command.id,
          parent_id: parent?.id ?? null,
          traversal_ids: [...(parent?.traversal_ids ?? []), command.id],
          full_path: joinPath(parent, settings.path),
          full_name: joinName(parent, settings.name),
          ...settings,
        },
      },
    ];
  }
  // DeleteGroup is how the removal reactor finishes: a group already gone needs nothing.
  if (command.type === 'DeleteGroup') {
    if (!state.exists || state.id === null) return [];
    return [{ type: 'GroupDeleted', data: { id: state.id, full_path: command.fullPath } }];
  }
  if (!state.exists || state.id === null || !state.settings || state.pendingDelete) throw notFound('Group');
  const id = state.id;
  const current: GroupSettings =
    command.type === 'UpdateGroup' ? { ...state.settings, share_with_group_lock: command.currentShareWithGroupLock } : state.settings;
  switch (command.type) {
    case 'UpdateGroup': {
      const changes = changedFields(current, command.changes);
      if (Object.keys(changes).length === 0) return [];
      const next: GroupSettings = { ...current, ...changes };
      validate(next, command.parent, (errors) => {
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
            ...(renamed
              ? { previous_full_path: joinPath(command.parent, current.path), previous_full_name: joinName(command.parent, current.name) }
              : {}),
          },
        },
      ];
    }
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

function changedFields(settings: GroupSettings, changes: GroupChanges): GroupChanges {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (JSON.stringify(settings[key as keyof GroupSettings]) !== JSON.stringify(value)) changed[key] = value;
  }
  return changed as GroupChanges;
}

export const groupDecider: Decider<GroupCommand, GroupEvent, GroupState> = { initialState, evolve, decide };

// ───────────────────────────── Claims ─────────────────────────────

const GROUP_PATH_TAKEN = 'Group path has already been taken';

/** GitLab: `validates :path, uniqueness` on the namespace — a taken path is a validation error. */
export const groupClaimRefusal: ClaimRefusal = () => invalid({ path: ['has already been taken'] });

/**
 * Top-level groups share the namespace path space with usernames (`namespace_path`);
 * subgroups are unique among their siblings (`group_path`, `<parent id>/<path>`).
 */
export function groupPathClaim(parentId: number | null, path: string) {
  return parentId === null
    ? { kind: 'namespace_path', key: path.toLowerCase(), conflictMessage: GROUP_PATH_TAKEN }
    : { kind: 'group_path', key: `${parentId}/${path.toLowerCase()}`, conflictMessage: GROUP_PATH_TAKEN };
}

export function groupClaims(event: GroupEvent, before: GroupState): ClaimChanges {
  switch (event.type) {
    case 'GroupCreated':
      return { acquire: [groupPathClaim(event.data.parent_id, event.data.path)], release: [] };
    case 'GroupUpdated': {
      const path = event.data.changes.path;
      if (path === undefined || !before.settings || path.toLowerCase() === before.settings.path.toLowerCase()) return NO_CLAIMS;
      return { acquire: [groupPathClaim(before.parentId, path)], release: [groupPathClaim(before.parentId, before.settings.path)] };
    }
    case 'GroupDeleted':
      return before.settings ? { acquire: [], release: [groupPathClaim(before.parentId, before.settings.path)] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}

export function groupEventIndex(event: GroupEvent) {
  return { groupId: event.data.id, targetType: 'Group', targetId: event.data.id };
}
