import { GROUP_ACCESS_LEVELS, VISIBILITIES } from '../../../domain/access.js';
import { AUTO_DEVOPS_DEPLOY_STRATEGIES, FEATURE_ACCESS_LEVELS, MERGE_METHODS, type ProjectSettings } from '../../../domain/projects/settings.js';
import { optional, t, withDefault, type Rules } from '../../kernel/params.js';

// ───────────────────────────── Parameters ─────────────────────────────

const feature = () => optional(t.values(FEATURE_ACCESS_LEVELS as unknown as ['disabled', 'private', 'enabled']));
const visibility = () => optional(t.values(VISIBILITIES as unknown as ['private', 'internal', 'public']));

// GitLab 12.10 (lib/api/helpers/projects_helpers.rb): optional_project_params_ce, then EE's.
export const projectParams = {
  description: optional(t.string()),
  build_git_strategy: optional(t.values(['fetch', 'clone'])),
  build_timeout: optional(t.integer()),
  auto_cancel_pending_pipelines: optional(t.values(['disabled', 'enabled'])),
  build_coverage_regex: optional(t.string()),
  ci_config_path: optional(t.string()),
  issues_enabled: optional(t.boolean()),
  merge_requests_enabled: optional(t.boolean()),
  wiki_enabled: optional(t.boolean()),
  jobs_enabled: optional(t.boolean()),
  snippets_enabled: optional(t.boolean()),
  issues_access_level: feature(),
  repository_access_level: feature(),
  merge_requests_access_level: feature(),
  wiki_access_level: feature(),
  builds_access_level: feature(),
  snippets_access_level: feature(),
  pages_access_level: optional(t.values(['disabled', 'private', 'enabled', 'public'])),
  emails_disabled: optional(t.boolean()),
  shared_runners_enabled: optional(t.boolean()),
  resolve_outdated_diff_discussions: optional(t.boolean()),
  remove_source_branch_after_merge: optional(t.boolean()),
  container_registry_enabled: optional(t.boolean()),
  lfs_enabled: optional(t.boolean()),
  visibility: visibility(),
  public_builds: optional(t.boolean()),
  // Entities expose public_jobs; clients send it back under that name too.
  public_jobs: optional(t.boolean()),
  request_access_enabled: optional(t.boolean()),
  only_allow_merge_if_pipeline_succeeds: optional(t.boolean()),
  only_allow_merge_if_all_discussions_are_resolved: optional(t.boolean()),
  tag_list: optional(t.array(t.string())),
  avatar: optional(t.file()),
  printing_merge_request_link_enabled: optional(t.boolean()),
  merge_method: optional(t.values(MERGE_METHODS as unknown as ['merge', 'rebase_merge', 'ff'])),
  initialize_with_readme: optional(t.boolean()),
  ci_default_git_depth: optional(t.integer()),
  auto_devops_enabled: optional(t.boolean()),
  auto_devops_deploy_strategy: optional(t.values(AUTO_DEVOPS_DEPLOY_STRATEGIES as unknown as ['continuous', 'manual', 'timed_incremental'])),
  autoclose_referenced_issues: optional(t.boolean()),
  suggestion_commit_message: optional(t.string()),
  // EE
  approvals_before_merge: optional(t.integer()),
  external_authorization_classification_label: optional(t.string()),
  packages_enabled: optional(t.boolean()),
  service_desk_enabled: optional(t.boolean()),
  mirror: optional(t.boolean()),
};

export const createParams = {
  name: optional(t.string()),
  path: optional(t.string()),
  ...projectParams,
  // Not declared by GitLab 12.10's POST /projects; accepted as the README's branch.
  default_branch: optional(t.string()),
  namespace_id: optional(t.integer()),
  import_url: optional(t.string()),
  template_name: optional(t.string()),
  template_project_id: optional(t.integer()),
};
export const createRules: Rules = { atLeastOneOf: [['name', 'path']], mutuallyExclusive: [['import_url', 'template_name', 'template_project_id']] };

export const updateParams = { name: optional(t.string()), default_branch: optional(t.string()), path: optional(t.string()), ...projectParams };
// GitLab: Helpers::ProjectsHelpers.update_params_at_least_one_of.
export const UPDATE_AT_LEAST_ONE_OF = [
  'auto_devops_enabled', 'auto_devops_deploy_strategy', 'auto_cancel_pending_pipelines', 'build_coverage_regex', 'build_git_strategy',
  'build_timeout', 'builds_access_level', 'ci_config_path', 'ci_default_git_depth', 'container_registry_enabled', 'default_branch',
  'description', 'autoclose_referenced_issues', 'issues_access_level', 'lfs_enabled', 'merge_requests_access_level', 'merge_method', 'name',
  'only_allow_merge_if_all_discussions_are_resolved', 'only_allow_merge_if_pipeline_succeeds', 'path', 'printing_merge_request_link_enabled',
  'public_builds', 'remove_source_branch_after_merge', 'repository_access_level', 'request_access_enabled', 'resolve_outdated_diff_discussions',
  'shared_runners_enabled', 'snippets_access_level', 'tag_list', 'visibility', 'wiki_access_level', 'avatar', 'issues_enabled', 'jobs_enabled',
  'merge_requests_enabled', 'wiki_enabled', 'snippets_enabled',
] as const;

const sortParams = {
  order_by: withDefault(t.values(['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at']), 'created_at'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
};

const minAccessLevel = () => optional(t.integerValues(GROUP_ACCESS_LEVELS as unknown as [10, 20, 30, 40, 50]));

// GitLab 12.10 (lib/api/projects.rb): collection_params, statistics_params, with_custom_attributes.
export const listParams = {
  ...sortParams,
  archived: optional(t.boolean()),
  visibility: visibility(),
  search: optional(t.string()),
  owned: withDefault(t.boolean(), false),
  starred: withDefault(t.boolean(), false),
  membership: withDefault(t.boolean(), false),
  with_issues_enabled: withDefault(t.boolean(), false),
  with_merge_requests_enabled: withDefault(t.boolean(), false),
  with_programming_language: optional(t.string()),
  min_access_level: minAccessLevel(),
  id_after: optional(t.integer()),
  id_before: optional(t.integer()),
  simple: withDefault(t.boolean(), false),
  statistics: withDefault(t.boolean(), false),
  with_custom_attributes: withDefault(t.boolean(), false),
};

// GitLab 12.10 (lib/api/groups.rb): GET /groups/:id/projects.
export const groupListParams = {
  archived: withDefault(t.boolean(), false),
  visibility: visibility(),
  search: optional(t.string()),
  ...sortParams,
  simple: withDefault(t.boolean(), false),
  owned: withDefault(t.boolean(), false),
  starred: withDefault(t.boolean(), false),
  with_issues_enabled: withDefault(t.boolean(), false),
  with_merge_requests_enabled: withDefault(t.boolean(), false),
  with_shared: withDefault(t.boolean(), true),
  include_subgroups: withDefault(t.boolean(), false),
  min_access_level: minAccessLevel(),
  with_custom_attributes: withDefault(t.boolean(), false),
  with_security_reports: withDefault(t.boolean(), false),
  id_after: optional(t.integer()),
  id_before: optional(t.integer()),
};

export type Input = Record<string, unknown>;

/** The five feature flags of the API and the access level each writes (ProjectFeaturesCompatibility). */
const FLAG_LEVELS = {
  issues_enabled: 'issues_access_level',
  merge_requests_enabled: 'merge_requests_access_level',
  wiki_enabled: 'wiki_access_level',
  jobs_enabled: 'builds_access_level',
  snippets_enabled: 'snippets_access_level',
} as const;

const PLAIN_SETTINGS = [
  'description', 'build_git_strategy', 'build_timeout', 'auto_cancel_pending_pipelines', 'build_coverage_regex', 'ci_config_path',
  'emails_disabled', 'shared_runners_enabled', 'resolve_outdated_diff_discussions', 'remove_source_branch_after_merge',
  'container_registry_enabled', 'lfs_enabled', 'visibility', 'request_access_enabled', 'only_allow_merge_if_pipeline_succeeds',
  'only_allow_merge_if_all_discussions_are_resolved', 'printing_merge_request_link_enabled', 'merge_method', 'ci_default_git_depth',
  'auto_devops_enabled', 'auto_devops_deploy_strategy', 'autoclose_referenced_issues', 'suggestion_commit_message',
] as const;
const EE_SETTINGS = ['approvals_before_merge', 'external_authorization_classification_label', 'packages_enabled', 'service_desk_enabled', 'mirror'] as const;
const ACCESS_LEVEL_SETTINGS = [
  'issues_access_level', 'repository_access_level', 'merge_requests_access_level', 'wiki_access_level', 'builds_access_level', 'snippets_access_level',
] as const;

/** Request fields onto project settings, the way GitLab's attribute writers take them. */
export function settingsFrom(input: Input, paid: boolean): { -readonly [K in keyof ProjectSettings]?: ProjectSettings[K] } {
  const settings: Record<string, unknown> = {};
  if (input.name !== undefined) settings.name = input.name;
  if (input.path !== undefined) settings.path = input.path;
  for (const field of PLAIN_SETTINGS) if (input[field] !== undefined) settings[field] = input[field];
  if (paid) for (const field of EE_SETTINGS) if (input[field] !== undefined) settings[field] = input[field];
  // GitLab: jobs_enabled is builds_enabled; public_builds is what public_jobs shows.
  const publicJobs = input.public_builds ?? input.public_jobs;
  if (publicJobs !== undefined) settings.public_jobs = publicJobs;
  for (const [flag, level] of Object.entries(FLAG_LEVELS)) if (input[flag] !== undefined) settings[level] = input[flag] ? 'enabled' : 'disabled';
  // The access levels are declared after the flags: they win.
  for (const level of ACCESS_LEVEL_SETTINGS) if (input[level] !== undefined) settings[level] = input[level];
  // GitLab 12.10: pages `public` is stored as enabled for a public project.
  if (input.pages_access_level !== undefined) settings.pages_access_level = input.pages_access_level === 'public' ? 'enabled' : input.pages_access_level;
  if (input.tag_list !== undefined) settings.tag_list = [...new Set((input.tag_list as string[]).map((tag) => tag.trim()).filter(Boolean))].sort();
  return settings;
}
