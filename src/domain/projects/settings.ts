import { z } from 'zod';
import { VISIBILITIES, type Visibility } from '../access.js';
import { DEFAULT_SETTINGS } from '../application-settings/attributes.js';

/** GitLab's ProjectFeature access levels (issues, repository, merge requests, wiki, builds, snippets, pages). */
export const FEATURE_ACCESS_LEVELS = ['disabled', 'private', 'enabled'] as const;
export type FeatureAccessLevel = (typeof FEATURE_ACCESS_LEVELS)[number];
export const MERGE_METHODS = ['merge', 'rebase_merge', 'ff'] as const;
export const AUTO_DEVOPS_DEPLOY_STRATEGIES = ['continuous', 'manual', 'timed_incremental'] as const;

const featureAccessLevel = z.enum(FEATURE_ACCESS_LEVELS);

/** A project's own settings, named as in GitLab's JSON (the *_enabled flags derive from the access levels). */
export const projectSettings = z.strictObject({
  name: z.string(),
  path: z.string(),
  description: z.string().nullable(),
  visibility: z.enum(VISIBILITIES),
  /** GitLab keeps tags sorted by name. */
  tag_list: z.array(z.string()).readonly(),
  issues_access_level: featureAccessLevel,
  repository_access_level: featureAccessLevel,
  merge_requests_access_level: featureAccessLevel,
  wiki_access_level: featureAccessLevel,
  builds_access_level: featureAccessLevel,
  snippets_access_level: featureAccessLevel,
  pages_access_level: featureAccessLevel,
  container_registry_enabled: z.boolean(),
  shared_runners_enabled: z.boolean(),
  lfs_enabled: z.boolean(),
  public_jobs: z.boolean(),
  request_access_enabled: z.boolean(),
  resolve_outdated_diff_discussions: z.boolean(),
  only_allow_merge_if_pipeline_succeeds: z.boolean(),
  only_allow_merge_if_all_discussions_are_resolved: z.boolean(),
  remove_source_branch_after_merge: z.boolean(),
  printing_merge_request_link_enabled: z.boolean(),
  merge_method: z.enum(MERGE_METHODS),
  ci_config_path: z.string().nullable(),
  ci_default_git_depth: z.int().nullable(),
  build_timeout: z.int(),
  build_coverage_regex: z.string().nullable(),
  build_git_strategy: z.enum(['fetch', 'clone']),
  auto_cancel_pending_pipelines: z.enum(['enabled', 'disabled']),
  /** null: inherited from the instance (enabled by default). */
  auto_devops_enabled: z.boolean().nullable(),
  auto_devops_deploy_strategy: z.enum(AUTO_DEVOPS_DEPLOY_STRATEGIES),
  autoclose_referenced_issues: z.boolean(),
  suggestion_commit_message: z.string().nullable(),
  emails_disabled: z.boolean().nullable(),
  // EE (paid tiers)
  approvals_before_merge: z.int(),
  mirror: z.boolean(),
  external_authorization_classification_label: z.string().nullable(),
  packages_enabled: z.boolean(),
  service_desk_enabled: z.boolean(),
});
export type ProjectSettings = Readonly<z.output<typeof projectSettings>>;

/** What PUT /projects/:id changes: settings, and the repository's HEAD. */
export const projectChanges = projectSettings.partial().extend({ default_branch: z.string().optional() });
export type ProjectChanges = Readonly<z.output<typeof projectChanges>>;

/** The settings part of a payload that carries them among other fields (ProjectCreated). */
export function settingsOf(data: ProjectSettings): ProjectSettings {
  const settings: Record<string, unknown> = {};
  for (const key of Object.keys(projectSettings.shape)) if (key in data) settings[key] = data[key as keyof ProjectSettings];
  return settings as ProjectSettings;
}

/** A new project's settings before the caller's: GitLab 12's column and instance defaults. */
export const DEFAULT_PROJECT_SETTINGS: Omit<ProjectSettings, 'name' | 'path'> = {
  description: null,
  // GitLab: Gitlab::CurrentSettings.default_project_visibility (createProject reads the current one).
  visibility: DEFAULT_SETTINGS.default_project_visibility as ProjectSettings['visibility'],
  tag_list: [],
  issues_access_level: 'enabled',
  repository_access_level: 'enabled',
  merge_requests_access_level: 'enabled',
  wiki_access_level: 'enabled',
  builds_access_level: 'enabled',
  snippets_access_level: 'enabled',
  pages_access_level: 'private',
  container_registry_enabled: true,
  shared_runners_enabled: true,
  lfs_enabled: true,
  public_jobs: true,
  request_access_enabled: true,
  resolve_outdated_diff_discussions: false,
  only_allow_merge_if_pipeline_succeeds: false,
  only_allow_merge_if_all_discussions_are_resolved: false,
  remove_source_branch_after_merge: true,
  printing_merge_request_link_enabled: true,
  merge_method: 'merge',
  ci_config_path: null,
  ci_default_git_depth: 50,
  build_timeout: 3600,
  build_coverage_regex: null,
  build_git_strategy: 'fetch',
  auto_cancel_pending_pipelines: 'enabled',
  auto_devops_enabled: null,
  auto_devops_deploy_strategy: 'continuous',
  autoclose_referenced_issues: true,
  suggestion_commit_message: null,
  emails_disabled: null,
  approvals_before_merge: 0,
  mirror: false,
  external_authorization_classification_label: null,
  packages_enabled: true,
  service_desk_enabled: false,
};

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
