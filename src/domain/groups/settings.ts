import { z } from 'zod';
import { allowedUnder, VISIBILITIES, type Visibility } from '../access.js';
import { invalid } from '../errors.js';

// A group's settings, and GitLab's validations of them.

export const PROJECT_CREATION_LEVELS = ['noone', 'maintainer', 'developer'] as const;
export type ProjectCreationLevel = (typeof PROJECT_CREATION_LEVELS)[number];
export const SUBGROUP_CREATION_LEVELS = ['owner', 'maintainer'] as const;
export type SubgroupCreationLevel = (typeof SUBGROUP_CREATION_LEVELS)[number];

/** A group's own settings, named as in GitLab's JSON (the fields of GroupCreated and GroupUpdated's changes). */
export const groupSettings = z.strictObject({
  name: z.string(),
  path: z.string(),
  description: z.string(),
  visibility: z.enum(VISIBILITIES),
  share_with_group_lock: z.boolean(),
  require_two_factor_authentication: z.boolean(),
  two_factor_grace_period: z.int(),
  project_creation_level: z.enum(PROJECT_CREATION_LEVELS),
  auto_devops_enabled: z.boolean().nullable(),
  subgroup_creation_level: z.enum(SUBGROUP_CREATION_LEVELS),
  emails_disabled: z.boolean().nullable(),
  mentions_disabled: z.boolean().nullable(),
  lfs_enabled: z.boolean(),
  request_access_enabled: z.boolean(),
  file_template_project_id: z.int().nullable(),
  shared_runners_minutes_limit: z.int().nullable(),
  extra_shared_runners_minutes_limit: z.int().nullable(),
});

export type GroupSettings = Readonly<z.output<typeof groupSettings>>;
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

// GitLab: Gitlab::PathRegex.namespace_format_regex and its message.
const PATH_FORMAT = /^(?:[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_\-]|[a-zA-Z0-9_])$/;
const PATH_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";
// GitLab 12: Gitlab::Regex.namespace_name_regex (letters, digits, '_', '.', dashes, spaces).
const NAME_FORMAT = /^[\p{L}\p{M}\p{Nd}\p{Pd}_. ]*$/u;
const NAME_FORMAT_MESSAGE = "can contain only letters, digits, '_', '.', dash and space.";

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
const MAX_ANCESTORS = 20;

type SettingsErrors = Record<string, string[]>;

/**
 * GitLab's Group validations, in the order Rails reports them (name, description, path,
 * parent_id, visibility_level, two_factor_grace_period); `extra` adds the update's own
 * before the visibility against the parent's.
 */
export function validateSettings(settings: GroupSettings, parent: ParentGroup | null, extra: (errors: SettingsErrors) => void = () => {}): void {
  const errors: SettingsErrors = {};
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

/** The settings in `changes` that differ from `settings` (undefined: not given). */
export function changedSettings(settings: GroupSettings, changes: GroupChanges): GroupChanges {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (JSON.stringify(settings[key as keyof GroupSettings]) !== JSON.stringify(value)) changed[key] = value;
  }
  return changed as GroupChanges;
}

export const joinPath = (parent: ParentGroup | null, path: string) => (parent ? `${parent.full_path}/${path}` : path);
export const joinName = (parent: ParentGroup | null, name: string) => (parent ? `${parent.full_name} / ${name}` : name);
