import { arrayOf, bool, date, dateTime, entity, extend, int, nullable, object, anyOf, ref, str, values } from './dsl.js';

const accessLevel = values('disabled', 'private', 'enabled');
const memberAccess = nullable(object({ access_level: int, notification_level: int }));

export const NamespaceBasic = entity('Entities::NamespaceBasic: the namespace a project is in.', {
  id: int,
  name: str,
  path: str,
  kind: values('user', 'group'),
  full_path: str,
  parent_id: nullable(int),
  avatar_url: nullable(str),
  web_url: str,
});

/** Entities::BasicProjectDetails: `simple=true` lists, and a project embedded in another answer. */
export const BasicProjectDetails = entity(
  'Entities::BasicProjectDetails (`default_branch` for those who may read the code; `license_url`, `license` with `license=true`; `custom_attributes` for an administrator).',
  {
    id: int,
    description: nullable(str),
    name: str,
    name_with_namespace: str,
    path: str,
    path_with_namespace: str,
    created_at: dateTime,
    default_branch: nullable(str),
    tag_list: arrayOf(str),
    ssh_url_to_repo: str,
    http_url_to_repo: str,
    web_url: str,
    readme_url: nullable(str),
    license_url: nullable(str),
    license: nullable(object({ key: str, name: str, nickname: nullable(str), html_url: nullable(str), source_url: nullable(str) })),
    avatar_url: nullable(str),
    star_count: int,
    forks_count: int,
    last_activity_at: dateTime,
    namespace: ref('NamespaceBasic'),
    custom_attributes: arrayOf(ref('CustomAttribute')),
  },
  ['default_branch', 'license_url', 'license', 'custom_attributes'],
);

const ProjectDetails = extend(
  BasicProjectDetails,
  "Entities::Project (ProjectWithAccess: with `permissions`). Fields shown by the caller's abilities (`open_issues_count`, `_links.issues`, `runners_token`, `import_error`, `build_git_strategy`, `ci_config_path`) or EE licences are optional.",
  {
    _links: object(
      { self: str, issues: str, merge_requests: str, repo_branches: str, labels: str, events: str, members: str },
      ['issues', 'merge_requests'],
    ),
    empty_repo: bool,
    archived: bool,
    visibility: str,
    owner: ref('UserBasic'),
    resolve_outdated_diff_discussions: bool,
    container_registry_enabled: bool,
    issues_enabled: bool,
    merge_requests_enabled: bool,
    wiki_enabled: bool,
    jobs_enabled: bool,
    snippets_enabled: bool,
    can_create_merge_request_in: bool,
    issues_access_level: accessLevel,
    repository_access_level: accessLevel,
    merge_requests_access_level: accessLevel,
    wiki_access_level: accessLevel,
    builds_access_level: accessLevel,
    snippets_access_level: accessLevel,
    pages_access_level: values('disabled', 'private', 'enabled', 'public'),
    emails_disabled: nullable(bool),
    shared_runners_enabled: bool,
    lfs_enabled: bool,
    creator_id: int,
    forked_from_project: ref('BasicProjectDetails'),
    import_status: str,
    import_error: nullable(str),
    open_issues_count: int,
    runners_token: str,
    ci_default_git_depth: nullable(int),
    public_jobs: bool,
    build_git_strategy: str,
    build_timeout: int,
    auto_cancel_pending_pipelines: str,
    build_coverage_regex: nullable(str),
    ci_config_path: nullable(str),
    shared_with_groups: arrayOf(object({ group_id: int, group_name: str, group_full_path: str, group_access_level: int, expires_at: nullable(date) })),
    only_allow_merge_if_pipeline_succeeds: bool,
    request_access_enabled: bool,
    only_allow_merge_if_all_discussions_are_resolved: bool,
    remove_source_branch_after_merge: bool,
    printing_merge_request_link_enabled: bool,
    merge_method: str,
    suggestion_commit_message: nullable(str),
    statistics: object({ commit_count: int, storage_size: int, repository_size: int, wiki_size: int, lfs_objects_size: int, job_artifacts_size: int }),
    auto_devops_enabled: bool,
    auto_devops_deploy_strategy: str,
    autoclose_referenced_issues: bool,
    permissions: object({ project_access: memberAccess, group_access: memberAccess }),
    approvals_before_merge: int,
    mirror: bool,
    external_authorization_classification_label: nullable(str),
    packages_enabled: bool,
    service_desk_enabled: bool,
    service_desk_address: nullable(str),
    marked_for_deletion_at: nullable(dateTime),
  },
  [
    'owner', 'forked_from_project', 'import_error', 'open_issues_count', 'runners_token', 'build_git_strategy', 'ci_config_path', 'statistics', 'permissions',
    'approvals_before_merge', 'mirror', 'external_authorization_classification_label', 'packages_enabled', 'service_desk_enabled', 'service_desk_address', 'marked_for_deletion_at',
  ],
);

/** What the project routes answer: Entities::Project, or BasicProjectDetails for `simple=true`. */
export const Project = { ...anyOf(ProjectDetails, ref('BasicProjectDetails')), description: 'Entities::Project (ProjectWithAccess: with `permissions`); BasicProjectDetails for `simple=true`.' };

export const ProjectGroupLink = entity('Entities::ProjectGroupLink.', { id: int, project_id: int, group_id: int, group_access: int, expires_at: nullable(date) });
