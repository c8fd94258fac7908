import type { Visibility } from './access.js';
import { allowedUnder } from './access.js';
import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { conflict, invalid, notFound, serviceError } from './errors.js';

// ───────────────────────────── Settings ─────────────────────────────

/** GitLab's ProjectFeature access levels (issues, repository, merge requests, wiki, builds, snippets, pages). */
export const FEATURE_ACCESS_LEVELS = ['disabled', 'private', 'enabled'] as const;
export type FeatureAccessLevel = (typeof FEATURE_ACCESS_LEVELS)[number];
export const MERGE_METHODS = ['merge', 'rebase_merge', 'ff'] as const;
export const AUTO_DEVOPS_DEPLOY_STRATEGIES = ['continuous', 'manual', 'timed_incremental'] as const;

/** A project's own settings, named as in GitLab's JSON (the *_enabled flags derive from the access levels). */
export interface ProjectSettings {
  readonly name: string;
  readonly path: string;
  readonly description: string | null;
  readonly visibility: Visibility;
  /** GitLab keeps tags sorted by name. */
  readonly tag_list: readonly string[];
  readonly issues_access_level: FeatureAccessLevel;
  readonly repository_access_level: FeatureAccessLevel;
  readonly merge_requests_access_level: FeatureAccessLevel;
  readonly wiki_access_level: FeatureAccessLevel;
  readonly builds_access_level: FeatureAccessLevel;
  readonly snippets_access_level: FeatureAccessLevel;
  readonly pages_access_level: FeatureAccessLevel;
  readonly container_registry_enabled: boolean;
  readonly shared_runners_enabled: boolean;
  readonly lfs_enabled: boolean;
  readonly public_jobs: boolean;
  readonly request_access_enabled: boolean;
  readonly resolve_outdated_diff_discussions: boolean;
  readonly only_allow_merge_if_pipeline_succeeds: boolean;
  readonly only_allow_merge_if_all_discussions_are_resolved: boolean;
  readonly remove_source_branch_after_merge: boolean;
  readonly printing_merge_request_link_enabled: boolean;
  readonly merge_method: (typeof MERGE_METHODS)[number];
  readonly ci_config_path: string | null;
  readonly ci_default_git_depth: number | null;
  readonly build_timeout: number;
  readonly build_coverage_regex: string | null;
  readonly build_git_strategy: 'fetch' | 'clone';
  readonly auto_cancel_pending_pipelines: 'enabled' | 'disabled';
  /** null: inherited from the instance (enabled by default). */
  readonly auto_devops_enabled: boolean | null;
  readonly auto_devops_deploy_strategy: (typeof AUTO_DEVOPS_DEPLOY_STRATEGIES)[number];
  readonly autoclose_referenced_issues: boolean;
  readonly suggestion_commit_message: string | null;
  readonly emails_disabled: boolean | null;
  // EE (paid tiers)
  readonly approvals_before_merge: number;
  readonly mirror: boolean;
  readonly external_authorization_classification_label: string | null;
  readonly packages_enabled: boolean;
  readonly service_desk_enabled: boolean;
}

export type ProjectChanges = Partial<ProjectSettings> & { readonly default_branch?: string };

/** The namespace a project lives in, as the command saw it (read from the namespaces table). */
export interface ProjectNamespace {
  readonly id: number;
  readonly kind: 'user' | 'group';
  readonly visibility: Visibility;
  readonly full_path: string;
  readonly full_name: string;
  /** Root first, ending with the namespace's id. */
  readonly traversal_ids: readonly number[];
}

// ───────────────────────────── Events ─────────────────────────────

export type ProjectEvent =
  | {
      readonly type: 'ProjectCreated';
      readonly data: ProjectSettings & {
        readonly id: number;
        readonly namespace_id: number;
        readonly creator_id: number;
        /** The namespace when the project was created (the projector follows later renames). */
        readonly namespace_kind: 'user' | 'group';
        readonly traversal_ids: readonly number[];
        readonly path_with_namespace: string;
        readonly name_with_namespace: string;
        /** initialize_with_readme: a first commit with README.md on the default branch. */
        readonly readme: boolean;
        /** The repository's HEAD; null while the repository is empty. */
        readonly default_branch: string | null;
      };
    }
  | { readonly type: 'ProjectUpdated'; readonly data: { readonly id: number; readonly changes: ProjectChanges } }
  | { readonly type: 'ProjectArchived'; readonly data: { readonly id: number } }
  | { readonly type: 'ProjectUnarchived'; readonly data: { readonly id: number } }
  | { readonly type: 'ProjectStarred'; readonly data: { readonly id: number; readonly user_id: number } }
  | { readonly type: 'ProjectUnstarred'; readonly data: { readonly id: number; readonly user_id: number } }
  /** DELETE /projects/:id: hidden at once (pending_delete); a reactor removes it. */
  | { readonly type: 'ProjectDeletionScheduled'; readonly data: { readonly id: number; readonly path_with_namespace: string } }
  | { readonly type: 'ProjectDeleted'; readonly data: { readonly id: number; readonly namespace_id: number; readonly path_with_namespace: string } };

export type ProjectEventType = ProjectEvent['type'];
export const PROJECT_EVENT_TYPES: readonly ProjectEventType[] = [
  'ProjectCreated',
  'ProjectUpdated',
  'ProjectArchived',
  'ProjectUnarchived',
  'ProjectStarred',
  'ProjectUnstarred',
  'ProjectDeletionScheduled',
  'ProjectDeleted',
];

export const projectStreamId = (id: number) => `project-${id}`;

// ───────────────────────────── State ─────────────────────────────

export interface ProjectState {
  readonly id: number | null;
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly pendingDelete: boolean;
  readonly namespaceId: number | null;
  readonly settings: ProjectSettings | null;
  readonly pathWithNamespace: string | null;
  readonly archived: boolean;
  readonly defaultBranch: string | null;
  /** Branches of the (minimal) repository: the README commit's branch, when there is one. */
  readonly branches: readonly string[];
  readonly starredBy: ReadonlySet<number>;
}

// ───────────────────────────── Commands ─────────────────────────────

export interface CreateProjectCommand {
  readonly type: 'CreateProject';
  readonly id: number;
  readonly creatorId: number;
  readonly namespace: ProjectNamespace;
  readonly settings: ProjectSettings;
  readonly initializeWithReadme: boolean;
  /** The branch the README goes to (GitLab 12: master). */
  readonly defaultBranch: string;
  /** What the claims table said before deciding (GitLab reports every validation error at once). */
  readonly taken: { readonly name: boolean; readonly path: boolean };
  /** Personal namespace only: the creator's projects_limit and personal project count. */
  readonly personalLimit: { readonly limit: number; readonly count: number } | null;
}

export type ProjectCommand =
  | CreateProjectCommand
  | {
      readonly type: 'UpdateProject';
      readonly changes: ProjectChanges;
      readonly namespace: ProjectNamespace;
      readonly taken: { readonly name: boolean; readonly path: boolean };
    }
  | { readonly type: 'ArchiveProject' }
  | { readonly type: 'UnarchiveProject' }
  | { readonly type: 'StarProject'; readonly userId: number }
  | { readonly type: 'UnstarProject'; readonly userId: number }
  | { readonly type: 'ScheduleProjectDeletion' }
  | { readonly type: 'DeleteProject' };

// ───────────────────────────── Validation ─────────────────────────────

// GitLab: Gitlab::Regex.project_name_regex and its message.
const NAME_FORMAT = /^[\p{L}\p{N}\u{00A9}-\u{1f9ff}_][\p{L}\p{N}\p{Pd}\u{00A9}-\u{1f9ff}_. ]*$/u;
export const NAME_FORMAT_MESSAGE = "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.";
// GitLab: Gitlab::PathRegex.project_path_format_regex and its message.
const PATH_FORMAT = /^[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*$/;
export const PATH_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";
// GitLab: Gitlab::PathRegex::PROJECT_WILDCARD_ROUTES (one-segment ones) may not be a project path.
const RESERVED_PATHS = new Set([
  '-', 'badges', 'blame', 'blob', 'builds', 'commits', 'create', 'create_dir', 'edit', 'files', 'find_file', 'new',
  'preview', 'raw', 'refs', 'tree', 'update', 'wikis',
]);

/** Ruby-hash-ordered validation errors: a key appears where its first message was added. */
class Errors {
  readonly fields: Record<string, string[]> = {};
  add(field: string, message: string) {
    (this.fields[field] ??= []).push(message);
  }
  get any() {
    return Object.keys(this.fields).length > 0;
  }
}

/**
 * GitLab's Project validations in the order Rails runs them: description, name, path,
 * name uniqueness, path uniqueness, the personal project limit, visibility against the group.
 */
function validate(
  settings: ProjectSettings,
  namespace: ProjectNamespace,
  taken: { name: boolean; path: boolean },
  personalLimit: { limit: number; count: number } | null,
  checkVisibility = true,
): void {
  const errors = new Errors();
  if (settings.description !== null && settings.description.length > 2000) errors.add('description', 'is too long (maximum is 2000 characters)');
  if (settings.name.trim() === '') errors.add('name', "can't be blank");
  if (settings.name.length > 255) errors.add('name', 'is too long (maximum is 255 characters)');
  if (!NAME_FORMAT.test(settings.name)) errors.add('name', NAME_FORMAT_MESSAGE);
  if (settings.path.trim() === '') errors.add('path', "can't be blank");
  if (!PATH_FORMAT.test(settings.path) || /\.(git|atom)$/i.test(settings.path)) errors.add('path', PATH_FORMAT_MESSAGE);
  else if (RESERVED_PATHS.has(settings.path.toLowerCase())) errors.add('path', `${settings.path} is a reserved name`);
  if (settings.path.length > 255) errors.add('path', 'is too long (maximum is 255 characters)');
  if (taken.name) errors.add('name', 'has already been taken');
  if (taken.path) errors.add('path', 'has already been taken');
  // GitLab: Project#check_personal_projects_limit (the API answers it with 403).
  if (personalLimit && personalLimit.count >= personalLimit.limit) {
    errors.add(
      'limit_reached',
      personalLimit.limit === 0
        ? 'Personal project creation is not allowed. Please contact your administrator with questions'
        : `Your project limit is ${personalLimit.limit} projects! Please contact your administrator to increase it`,
    );
  }
  // GitLab: Project#visibility_level_allowed_by_group.
  if (checkVisibility && namespace.kind === 'group' && !allowedUnder(settings.visibility, namespace.visibility)) {
    errors.add('visibility_level', `${settings.visibility} is not allowed in a ${namespace.visibility} group.`);
  }
  if (errors.any) throw invalid(errors.fields);
}

// Rails I18n's approximations for letters that do not decompose into a base letter.
const TRANSLITERATIONS: Record<string, string> = {
  ß: 'ss', Æ: 'AE', æ: 'ae', Ø: 'O', ø: 'o', Œ: 'OE', œ: 'oe', Þ: 'TH', þ: 'th', Ð: 'D', ð: 'd', Đ: 'D', đ: 'd', Ł: 'L', ł: 'l',
  ı: 'i', Ħ: 'H', ħ: 'h', Ŋ: 'NG', ŋ: 'ng',
};

/**
 * Rails' String#parameterize, as GitLab derives a path from a name: transliterate to ASCII,
 * every run of other characters becomes one '-', no leading or trailing '-', lower case.
 */
export function parameterize(name: string): string {
  const ascii = name
    .replace(/[ßÆæØøŒœÞþÐðĐđŁłıĦħŊŋ]/g, (ch) => TRANSLITERATIONS[ch] ?? ch)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x00-\x7f]/g, '?');
  return ascii
    .replace(/[^a-z0-9\-_]+/gi, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (): ProjectState => ({
  id: null,
  exists: false,
  deleted: false,
  pendingDelete: false,
  namespaceId: null,
  settings: null,
  pathWithNamespace: null,
  archived: false,
  defaultBranch: null,
  branches: [],
  starredBy: new Set(),
});

const SETTINGS_OF_EVENT_KEYS = [
  'id', 'namespace_id', 'creator_id', 'namespace_kind', 'traversal_ids', 'path_with_namespace', 'name_with_namespace', 'readme', 'default_branch',
] as const;

/** The settings part of a ProjectCreated payload. */
export function settingsOf(data: Extract<ProjectEvent, { type: 'ProjectCreated' }>['data']): ProjectSettings {
  const settings: Record<string, unknown> = { ...data };
  for (const key of SETTINGS_OF_EVENT_KEYS) delete settings[key];
  return settings as unknown as ProjectSettings;
}

function evolve(state: ProjectState, event: ProjectEvent): ProjectState {
  switch (event.type) {
    case 'ProjectCreated': {
      const d = event.data;
      return {
        ...state,
        id: d.id,
        exists: true,
        namespaceId: d.namespace_id,
        settings: settingsOf(d),
        pathWithNamespace: d.path_with_namespace,
        defaultBranch: d.default_branch,
        branches: d.readme && d.default_branch ? [d.default_branch] : [],
      };
    }
    case 'ProjectUpdated': {
      const { default_branch, ...changes } = event.data.changes;
      return { ...state, settings: { ...state.settings!, ...changes }, defaultBranch: default_branch ?? state.defaultBranch };
    }
    case 'ProjectArchived':
      return { ...state, archived: true };
    case 'ProjectUnarchived':
      return { ...state, archived: false };
    case 'ProjectStarred':
      return { ...state, starredBy: new Set([...state.starredBy, event.data.user_id]) };
    case 'ProjectUnstarred': {
      const starredBy = new Set(state.starredBy);
      starredBy.delete(event.data.user_id);
      return { ...state, starredBy };
    }
    case 'ProjectDeletionScheduled':
      return { ...state, pendingDelete: true };
    case 'ProjectDeleted':
      return { ...state, exists: false, deleted: true, pendingDelete: false };
    default:
      return state;
  }
}

function decide(command: ProjectCommand, state: ProjectState): ProjectEvent[] {
  if (command.type === 'CreateProject') {
    if (state.exists || state.deleted) throw conflict('Project already exists');
    const { namespace, settings } = command;
    validate(settings, namespace, command.taken, command.personalLimit);
    const defaultBranch = command.initializeWithReadme ? command.defaultBranch : null;
    return [
      {
        type: 'ProjectCreated',
        data: {
          id: command.id,
          namespace_id: namespace.id,
          creator_id: command.creatorId,
          namespace_kind: namespace.kind,
          traversal_ids: namespace.traversal_ids,
          path_with_namespace: `${namespace.full_path}/${settings.path}`,
          name_with_namespace: `${namespace.full_name} / ${settings.name}`,
          readme: command.initializeWithReadme,
          default_branch: defaultBranch,
          ...settings,
        },
      },
    ];
  }
  // DeleteProject is how removals finish (the reactor, a group's removal): a project gone needs nothing.
  if (command.type === 'DeleteProject') {
    if (!state.exists || state.id === null) return [];
    return [{ type: 'ProjectDeleted', data: { id: state.id, namespace_id: state.namespaceId!, path_with_namespace: state.pathWithNamespace ?? '' } }];
  }
  if (!state.exists || state.id === null || !state.settings || state.pendingDelete) throw notFound('Project');
  const id = state.id;
  switch (command.type) {
    case 'UpdateProject': {
      const { default_branch, ...requested } = command.changes;
      const changes: Record<string, unknown> = changedFields(state.settings, requested);
      // GitLab (Projects::UpdateService): the new default branch must exist in the repository.
      if (default_branch !== undefined && default_branch !== state.defaultBranch) {
        if (!state.branches.includes(default_branch)) throw serviceError('Could not set the default branch');
        changes.default_branch = default_branch;
      }
      if (Object.keys(changes).length === 0) return [];
      const next: ProjectSettings = { ...state.settings, ...(changes as Partial<ProjectSettings>) };
      const taken = { name: changes.name !== undefined && command.taken.name, path: changes.path !== undefined && command.taken.path };
      // GitLab validates the visibility against the group only when it changes.
      validate(next, command.namespace, taken, null, changes.visibility !== undefined);
      return [{ type: 'ProjectUpdated', data: { id, changes: changes as ProjectChanges } }];
    }
    // GitLab: archiving an archived project (or unarchiving an active one) changes nothing.
    case 'ArchiveProject':
      return state.archived ? [] : [{ type: 'ProjectArchived', data: { id } }];
    case 'UnarchiveProject':
      return state.archived ? [{ type: 'ProjectUnarchived', data: { id } }] : [];
    // The API answers 304 when there is nothing to toggle; the decider just appends nothing.
    case 'StarProject':
      return state.starredBy.has(command.userId) ? [] : [{ type: 'ProjectStarred', data: { id, user_id: command.userId } }];
    case 'UnstarProject':
      return state.starredBy.has(command.userId) ? [{ type: 'ProjectUnstarred', data: { id, user_id: command.userId } }] : [];
    case 'ScheduleProjectDeletion':
      return [{ type: 'ProjectDeletionScheduled', data: { id, path_with_namespace: state.pathWithNamespace ?? '' } }];
    default:
      return unhandled(command);
  }
}

function changedFields(settings: ProjectSettings, changes: Partial<ProjectSettings>): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (JSON.stringify(settings[key as keyof ProjectSettings]) !== JSON.stringify(value)) changed[key] = value;
  }
  return changed;
}

export const projectDecider: Decider<ProjectCommand, ProjectEvent, ProjectState> = { initialState, evolve, decide };

// ───────────────────────────── Claims ─────────────────────────────

const PROJECT_NAME_TAKEN = 'Project name has already been taken';
const PROJECT_PATH_TAKEN = 'Project path has already been taken';

/** GitLab validates the name's and the path's uniqueness on the model: a taken one is a validation error. */
export const projectClaimRefusal: ClaimRefusal = (claim) => invalid({ [claim.kind === 'project_name' ? 'name' : 'path']: ['has already been taken'] });

/** GitLab: `validates :name, uniqueness: { scope: :namespace_id }` (exact). */
export const projectNameClaim = (namespaceId: number, name: string) => ({ kind: 'project_name', key: `${namespaceId}/${name}`, conflictMessage: PROJECT_NAME_TAKEN });
/** Paths are unique in a namespace regardless of case. */
export const projectPathClaim = (namespaceId: number, path: string) => ({
  kind: 'project_path',
  key: `${namespaceId}/${path.toLowerCase()}`,
  conflictMessage: PROJECT_PATH_TAKEN,
});

export function projectClaims(event: ProjectEvent, before: ProjectState): ClaimChanges {
  switch (event.type) {
    case 'ProjectCreated':
      return { acquire: [projectNameClaim(event.data.namespace_id, event.data.name), projectPathClaim(event.data.namespace_id, event.data.path)], release: [] };
    case 'ProjectUpdated': {
      const { name, path } = event.data.changes;
      if (!before.settings || before.namespaceId === null) return NO_CLAIMS;
      const ns = before.namespaceId;
      const acquire = [];
      const release = [];
      if (name !== undefined && name !== before.settings.name) {
        acquire.push(projectNameClaim(ns, name));
        release.push(projectNameClaim(ns, before.settings.name));
      }
      if (path !== undefined && path.toLowerCase() !== before.settings.path.toLowerCase()) {
        acquire.push(projectPathClaim(ns, path));
        release.push(projectPathClaim(ns, before.settings.path));
      }
      return { acquire, release };
    }
    case 'ProjectDeleted':
      return before.settings && before.namespaceId !== null
        ? { acquire: [], release: [projectNameClaim(before.namespaceId, before.settings.name), projectPathClaim(before.namespaceId, before.settings.path)] }
        : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}

export function projectEventIndex(event: ProjectEvent) {
  return { projectId: event.data.id, targetType: 'Project', targetId: event.data.id };
}
