/**
 * Plan tiers (FORGELOG_PLAN), checked the way GitLab EE checks a licence:
 * `License.feature_available?(feature)`. `free` answers as GitLab CE; the others as GitLab EE
 * under that licence.
 */

/** Lowest first: a plan has every feature of the plans before it. */
export const PLANS = ['free', 'starter', 'premium', 'ultimate'] as const;
export type Plan = (typeof PLANS)[number];

/** Each feature forgelog gates, by GitLab EE's name (License EES/EEP/EEU_FEATURES, 12.10) → the lowest plan that has it. */
export const LICENSED_FEATURES = {
  /** Not a licensed feature: EE's own fields and parameters, which EE has under every licence and CE lacks. */
  ee: 'starter',
  audit_events: 'starter',
  merge_request_approvers: 'starter',
  multiple_merge_request_assignees: 'starter',
  multiple_issue_assignees: 'starter',
  issue_weights: 'starter',
  protected_refs_for_users: 'starter',
  repository_mirrors: 'starter',
  group_webhooks: 'starter',
  jenkins_integration: 'starter',
  multiple_project_issue_boards: 'starter',
  scoped_issue_board: 'starter',
  wip_limits: 'starter',
  related_issues: 'starter',
  adjourned_deletion_for_projects_and_groups: 'premium',
  admin_audit_log: 'premium',
  code_owner_approval_required: 'premium',
  /** Not a licensed feature in GitLab (a GitLab.com setting): the application settings' spec marks it premium. */
  check_namespace_plan: 'premium',
  custom_file_templates: 'premium',
  custom_file_templates_for_namespace: 'premium',
  default_project_deletion_protection: 'premium',
  elastic_search: 'premium',
  email_additional_text: 'premium',
  external_authorization_service_api_management: 'premium',
  feature_flags: 'premium',
  geo: 'premium',
  group_saml: 'premium',
  github_project_service_integration: 'premium',
  ldap_group_sync_filter: 'premium',
  packages: 'premium',
  protected_environments: 'premium',
  service_desk: 'premium',
  epics: 'ultimate',
  personal_access_token_expiration_policy: 'ultimate',
  pseudonymizer: 'ultimate',
} as const satisfies Record<string, Plan>;

export type LicensedFeature = keyof typeof LICENSED_FEATURES;

/** GitLab EE's License.feature_available?(feature), under `plan`. */
export const licensed = (plan: Plan, feature: LicensedFeature): boolean => PLANS.indexOf(plan) >= PLANS.indexOf(LICENSED_FEATURES[feature]);
