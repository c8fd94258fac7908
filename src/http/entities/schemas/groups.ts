import { arrayOf, bool, entity, extend, int, nullable, object, ref, str } from './dsl.js';

export const Group = entity(
  "Entities::Group: the list view (`custom_attributes`, `statistics` for an administrator's asking; EE's `ldap_cn`, `ldap_access`, `file_template_project_id` under their licences).",
  {
    id: int,
    web_url: str,
    name: str,
    path: str,
    description: str,
    visibility: str,
    share_with_group_lock: bool,
    require_two_factor_authentication: bool,
    two_factor_grace_period: int,
    project_creation_level: str,
    auto_devops_enabled: nullable(bool),
    subgroup_creation_level: str,
    emails_disabled: nullable(bool),
    lfs_enabled: bool,
    avatar_url: nullable(str),
    request_access_enabled: bool,
    full_name: str,
    full_path: str,
    parent_id: nullable(int),
    custom_attributes: arrayOf(ref('CustomAttribute')),
    statistics: object({ storage_size: int, repository_size: int, wiki_size: int, lfs_objects_size: int, job_artifacts_size: int, packages_size: int }),
    ldap_cn: nullable(str),
    ldap_access: nullable(int),
    file_template_project_id: nullable(int),
  },
  ['custom_attributes', 'statistics', 'ldap_cn', 'ldap_access', 'file_template_project_id'],
);

export const GroupDetail = extend(
  Group,
  "Entities::GroupDetail: the single view (`runners_token` for those who administer the group; EE's minutes limits).",
  {
    runners_token: str,
    projects: arrayOf(ref('Project')),
    shared_projects: arrayOf(ref('Project')),
    shared_runners_minutes_limit: nullable(int),
    extra_shared_runners_minutes_limit: nullable(int),
  },
  ['runners_token', 'shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit'],
);
