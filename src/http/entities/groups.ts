import type { Config } from '../../config.js';
import { licensed } from '../../domain/policy/licensed.js';
import { avatarUrlOf } from '../../domain/uploads.js';
import type { NamespaceRow } from '../../projections/groups/tables.js';

export const groupWebUrl = (config: Config, fullPath: string) => `${config.externalUrl}/groups/${fullPath}`;

export interface GroupEntityOptions {
  /** `statistics=true` by an administrator. */
  readonly statistics?: boolean;
  /** `with_custom_attributes=true` by an administrator: the group's attributes. */
  readonly customAttributes?: readonly { key: string; value: string }[] | undefined;
}

export interface GroupDetailOptions extends GroupEntityOptions {
  /** Only for those who administer the group (GitLab: user_can_admin_group). */
  readonly runnersToken?: string | undefined;
  /** Serialised project records (at most 100 each); omitted with `with_projects=false`. */
  readonly projects: readonly unknown[];
  readonly sharedProjects: readonly unknown[];
}

/**
 * Entities::Group (GitLab 12): the list view. EE adds ldap_cn/ldap_access, and
 * file_template_project_id where custom file templates are licensed (premium).
 */
export function toGroup(row: NamespaceRow, config: Config, options: GroupEntityOptions = {}) {
  return {
    id: row.id,
    web_url: groupWebUrl(config, row.full_path),
    name: row.name,
    path: row.path,
    description: row.description,
    visibility: row.visibility,
    share_with_group_lock: row.share_with_group_lock,
    require_two_factor_authentication: row.require_two_factor_authentication,
    two_factor_grace_period: row.two_factor_grace_period,
    project_creation_level: row.project_creation_level,
    auto_devops_enabled: row.auto_devops_enabled,
    subgroup_creation_level: row.subgroup_creation_level,
    emails_disabled: row.emails_disabled,
    lfs_enabled: row.lfs_enabled,
    avatar_url: avatarUrlOf(config.externalUrl, row.avatar_url),
    request_access_enabled: row.request_access_enabled,
    full_name: row.full_name,
    full_path: row.full_path,
    parent_id: row.parent_id,
    ...(options.customAttributes ? { custom_attributes: options.customAttributes.map(({ key, value }) => ({ key, value })) } : {}),
    ...(options.statistics
      ? {
          // No repositories are stored: every size is 0.
          statistics: { storage_size: 0, repository_size: 0, wiki_size: 0, lfs_objects_size: 0, job_artifacts_size: 0, packages_size: 0 },
        }
      : {}),
    ...(licensed(config.plan, 'ee') ? { ldap_cn: null, ldap_access: null } : {}),
    ...(licensed(config.plan, 'custom_file_templates_for_namespace') ? { file_template_project_id: row.file_template_project_id } : {}),
  };
}

/** Entities::GroupDetail: the single-group view (GET /groups/:id, POST, PUT). */
export function toGroupDetail(row: NamespaceRow, config: Config, options: GroupDetailOptions) {
  // Fast path (not a pattern to copy): added to the list view's object, since spreading it
  // into a new literal costs ~8 µs.
  const out: Record<string, unknown> = toGroup(row, config, options);
  if (options.runnersToken !== undefined) out.runners_token = options.runnersToken;
  out.projects = options.projects;
  out.shared_projects = options.sharedProjects;
  if (licensed(config.plan, 'ee')) {
    out.shared_runners_minutes_limit = row.shared_runners_minutes_limit;
    out.extra_shared_runners_minutes_limit = row.extra_shared_runners_minutes_limit;
  }
  return out;
}

export const toCustomAttribute = (attribute: { key: string; value: string }) => ({ key: attribute.key, value: attribute.value });
