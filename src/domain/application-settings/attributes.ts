import type { LicensedFeature } from '../policy/licensed.js';
import { FORBIDDEN_KEY_VALUE, type KeyRestrictions, SSH_KEY_SIZES, type SshKeyType } from '../ssh-keys.js';

/**
 * The instance's application settings (GitLab's ApplicationSetting): every attribute, its
 * kind, its value on a fresh GitLab 12 instance (ApplicationSettingImplementation.defaults,
 * the column defaults and gitlab.yml's defaults), the paid feature that shows it, and
 * whether it is a secret (kept encrypted in the log). Defaults live here and nowhere else.
 */

export type AttributeKind = 'string' | 'boolean' | 'integer' | 'float' | 'strings' | 'integers' | 'visibility';

export type SettingValue = string | number | boolean | null | readonly string[] | readonly number[];

export interface AttributeDef {
  readonly kind: AttributeKind;
  readonly default: SettingValue;
  /** Grape's `values:` — what the parameter accepts (else "does not have a valid value"). */
  readonly values?: readonly (string | number)[];
  /** EE: shown and accepted only under a licence with this feature. */
  readonly feature?: LicensedFeature;
  /** Encrypted before it reaches the log (ApplicationSetting's attr_encrypted columns). */
  readonly secret?: true;
  /** Never shown in a response (GitLab's entity drops it). */
  readonly hidden?: true;
  /** Shown, not set through the API. */
  readonly readOnly?: true;
}

/** A key restriction of 0 allows any size; -1 forbids the type; else one of the type's sizes (KeyRestrictionValidator). */
const NO_KEY_RESTRICTION = 0;
const keyRestriction = (type: SshKeyType): AttributeDef => ({
  kind: 'integer',
  default: NO_KEY_RESTRICTION,
  values: [NO_KEY_RESTRICTION, ...SSH_KEY_SIZES[type], FORBIDDEN_KEY_VALUE],
});

const str = (value: string | null = null, extra: Partial<AttributeDef> = {}): AttributeDef => ({ kind: 'string', default: value, ...extra });
const bool = (value: boolean, extra: Partial<AttributeDef> = {}): AttributeDef => ({ kind: 'boolean', default: value, ...extra });
const int = (value: number | null, extra: Partial<AttributeDef> = {}): AttributeDef => ({ kind: 'integer', default: value, ...extra });
const visibility: AttributeDef = { kind: 'visibility', default: 'private' };
const es = (def: AttributeDef): AttributeDef => ({ ...def, feature: 'elastic_search' });
/** EE's own attributes (EE::ApplicationSettingsHelper#visible_attributes): under every EE licence, never in CE. */
const ee = (def: AttributeDef): AttributeDef => ({ ...def, feature: 'ee' });
/** EE::ApplicationSettingsHelper.repository_mirror_attributes: shown and taken under the repository_mirrors licence. */
const mirror = (def: AttributeDef): AttributeDef => ({ ...def, feature: 'repository_mirrors' });

/** Gitlab::ImportSources.values (GitLab 12.10): what `import_sources` takes, and its default (gitlab.yml: every source). */
export const IMPORT_SOURCES: readonly string[] = ['github', 'bitbucket', 'bitbucket_server', 'gitlab', 'google_code', 'fogbugz', 'git', 'gitlab_project', 'gitea', 'manifest', 'phabricator'];

/** In GitLab's order where it has one (ApplicationSettingsHelper.visible_attributes is near alphabetical). */
export const ATTRIBUTES = {
  admin_notification_email: str(),
  after_sign_out_path: str(),
  after_sign_up_text: str(),
  akismet_api_key: str(null, { secret: true }),
  akismet_enabled: bool(false),
  allow_group_owners_to_manage_ldap: bool(true, { feature: 'ldap_group_sync_filter' }),
  allow_local_requests_from_web_hooks_and_services: bool(false),
  allow_local_requests_from_system_hooks: bool(true),
  archive_builds_in_human_readable: str(),
  asset_proxy_enabled: bool(false),
  asset_proxy_secret_key: str(null, { secret: true, hidden: true }),
  asset_proxy_url: str(),
  asset_proxy_whitelist: { kind: 'strings', default: [] },
  authorized_keys_enabled: bool(true),
  auto_devops_domain: str(),
  auto_devops_enabled: bool(true),
  check_namespace_plan: bool(false, { feature: 'check_namespace_plan' }),
  /** null shows GitLab's default, `users.noreply.<host>` (a fact of the configuration, not the log). */
  commit_email_hostname: str(),
  container_registry_token_expire_delay: int(5),
  custom_http_clone_url_root: str(),
  default_artifacts_expire_in: str('30 days'),
  default_branch_protection: int(2, { values: [0, 1, 2] }),
  default_ci_config_path: str(),
  default_group_visibility: visibility,
  default_project_creation: int(2, { values: [0, 1, 2] }),
  default_project_deletion_protection: bool(false, { feature: 'default_project_deletion_protection' }),
  default_project_visibility: visibility,
  default_projects_limit: int(100000),
  default_snippet_visibility: visibility,
  deletion_adjourned_period: int(7, { feature: 'adjourned_deletion_for_projects_and_groups' }),
  diff_max_patch_bytes: int(102400),
  disabled_oauth_sign_in_sources: { kind: 'strings', default: [] },
  dns_rebinding_protection_enabled: bool(true),
  domain_blacklist: { kind: 'strings', default: [] },
  domain_blacklist_enabled: bool(false),
  domain_whitelist: { kind: 'strings', default: null },
  dsa_key_restriction: keyRestriction('dsa'),
  ecdsa_key_restriction: keyRestriction('ecdsa'),
  ed25519_key_restriction: keyRestriction('ed25519'),
  eks_access_key_id: str(),
  eks_account_id: str(),
  eks_integration_enabled: bool(false),
  eks_secret_access_key: str(null, { secret: true, hidden: true }),
  elasticsearch_aws: es(bool(false)),
  elasticsearch_aws_access_key: es(str()),
  elasticsearch_aws_region: es(str('us-east-1')),
  elasticsearch_aws_secret_access_key: es(str(null, { secret: true })),
  elasticsearch_indexing: es(bool(false)),
  elasticsearch_limit_indexing: es(bool(false)),
  elasticsearch_namespace_ids: es({ kind: 'integers', default: [] }),
  elasticsearch_project_ids: es({ kind: 'integers', default: [] }),
  elasticsearch_replicas: es(int(1)),
  elasticsearch_search: es(bool(false)),
  elasticsearch_shards: es(int(5)),
  /** Stored as given; shown as the list of its comma-separated URLs. */
  elasticsearch_url: es(str('http://localhost:9200')),
  email_additional_text: str(null, { feature: 'email_additional_text' }),
  email_author_in_body: bool(false),
  enabled_git_access_protocol: str(null, { values: ['ssh', 'http', 'nil'] }),
  enforce_terms: bool(false),
  external_auth_client_cert: str(),
  external_auth_client_key: str(null, { secret: true }),
  external_auth_client_key_pass: str(null, { secret: true }),
  external_authorization_service_default_label: str(),
  external_authorization_service_enabled: bool(false),
  external_authorization_service_timeout: { kind: 'float', default: 0.5 },
  external_authorization_service_url: str(),
  file_template_project_id: int(null, { feature: 'custom_file_templates' }),
  first_day_of_week: int(0),
  force_pages_access_control: bool(false),
  geo_node_allowed_ips: str('0.0.0.0/0, ::/0', { feature: 'geo' }),
  geo_status_timeout: int(10, { feature: 'geo' }),
  gitaly_timeout_default: int(55),
  gitaly_timeout_fast: int(10),
  gitaly_timeout_medium: int(30),
  grafana_enabled: bool(false),
  grafana_url: str('/-/grafana'),
  gravatar_enabled: bool(true),
  hashed_storage_enabled: bool(true),
  help_page_hide_commercial_content: bool(false),
  help_page_support_url: str(),
  help_page_text: str(),
  help_text: ee(str()),
  hide_third_party_offers: bool(false),
  home_page_url: str(),
  housekeeping_bitmaps_enabled: bool(true),
  housekeeping_enabled: bool(true),
  housekeeping_full_repack_period: int(50),
  housekeeping_gc_period: int(200),
  housekeeping_incremental_repack_period: int(10),
  html_emails_enabled: bool(true),
  import_sources: { kind: 'strings', default: IMPORT_SOURCES, values: IMPORT_SOURCES },
  instance_statistics_visibility_private: bool(false),
  issues_create_limit: int(300),
  local_markdown_version: int(0),
  lock_memberships_to_ldap: ee(bool(false)),
  login_recaptcha_protection_enabled: bool(false),
  max_artifacts_size: int(100),
  max_attachment_size: int(10),
  max_pages_size: int(100),
  max_personal_access_token_lifetime: int(null, { feature: 'personal_access_token_expiration_policy' }),
  metrics_enabled: bool(false),
  metrics_host: str('localhost'),
  metrics_method_call_threshold: int(10),
  metrics_packet_size: int(1),
  metrics_pool_size: int(16),
  metrics_port: int(8089),
  metrics_sample_interval: int(15),
  metrics_timeout: int(10),
  minimum_password_length: int(8),
  mirror_available: bool(true),
  mirror_capacity_threshold: mirror(int(50)),
  mirror_max_capacity: mirror(int(100)),
  mirror_max_delay: mirror(int(300)),
  outbound_local_requests_whitelist: { kind: 'strings', default: [] },
  pages_domain_verification_enabled: bool(true),
  password_authentication_enabled_for_git: bool(true),
  password_authentication_enabled_for_web: bool(true),
  performance_bar_allowed_group_id: int(null, { readOnly: true }),
  plantuml_enabled: bool(false),
  plantuml_url: str(),
  polling_interval_multiplier: { kind: 'float', default: 1 },
  project_export_enabled: bool(true),
  prometheus_metrics_enabled: bool(true),
  protected_ci_variables: bool(false),
  pseudonymizer_enabled: bool(false, { feature: 'pseudonymizer' }),
  push_event_activities_limit: int(3),
  push_event_hooks_limit: int(3),
  raw_blob_request_limit: int(300),
  recaptcha_enabled: bool(false),
  recaptcha_private_key: str(null, { secret: true }),
  recaptcha_site_key: str(),
  receive_max_input_size: int(null),
  repository_checks_enabled: bool(true),
  repository_size_limit: ee(int(0)),
  repository_storages: { kind: 'strings', default: ['default'] },
  require_two_factor_authentication: bool(false),
  restricted_visibility_levels: { kind: 'strings', default: [] },
  rsa_key_restriction: keyRestriction('rsa'),
  send_user_confirmation_email: bool(false),
  session_expire_delay: int(10080),
  shared_runners_enabled: bool(true),
  shared_runners_minutes: ee(int(0)),
  shared_runners_text: str(),
  sign_in_text: str(),
  signup_enabled: bool(true),
  slack_app_enabled: ee(bool(false)),
  slack_app_id: ee(str()),
  slack_app_secret: ee(str(null, { secret: true })),
  slack_app_verification_token: ee(str(null, { secret: true })),
  snippet_size_limit: int(50 * 1024 * 1024),
  snowplow_app_id: str(),
  snowplow_collector_hostname: str(),
  snowplow_cookie_domain: str(),
  snowplow_enabled: bool(false),
  snowplow_iglu_registry_url: str(),
  sourcegraph_enabled: bool(false),
  sourcegraph_public_only: bool(true),
  sourcegraph_url: str(),
  static_objects_external_storage_auth_token: str(null, { secret: true }),
  static_objects_external_storage_url: str(),
  terminal_max_session_time: int(0),
  terms: str(),
  /** The throttle_* settings are stored and shown; forgelog does not enforce them yet (GitLab: Rack::Attack). */
  throttle_authenticated_api_enabled: bool(false),
  throttle_authenticated_api_period_in_seconds: int(3600),
  throttle_authenticated_api_requests_per_period: int(7200),
  throttle_authenticated_web_enabled: bool(false),
  throttle_authenticated_web_period_in_seconds: int(3600),
  throttle_authenticated_web_requests_per_period: int(7200),
  throttle_incident_management_notification_enabled: ee(bool(false)),
  throttle_incident_management_notification_per_period: ee(int(3600)),
  throttle_incident_management_notification_period_in_seconds: ee(int(3600)),
  throttle_protected_paths_enabled: bool(false),
  throttle_protected_paths_period_in_seconds: int(60),
  throttle_protected_paths_requests_per_period: int(10),
  throttle_unauthenticated_enabled: bool(false),
  throttle_unauthenticated_period_in_seconds: int(3600),
  throttle_unauthenticated_requests_per_period: int(3600),
  time_tracking_limit_to_hours: bool(false),
  two_factor_grace_period: int(48),
  unique_ips_limit_enabled: bool(false),
  unique_ips_limit_per_user: int(10),
  unique_ips_limit_time_window: int(3600),
  usage_ping_enabled: bool(true),
  user_default_external: bool(false),
  user_default_internal_regex: str(),
  user_oauth_applications: bool(true),
  user_show_add_ssh_key_message: bool(true),
  version_check_enabled: bool(true),
  web_ide_clientside_preview_enabled: bool(false),
} as const satisfies Record<string, AttributeDef>;

export type AttributeName = keyof typeof ATTRIBUTES;
export const ATTRIBUTE_NAMES = Object.keys(ATTRIBUTES) as AttributeName[];
export const attributeDef = (name: AttributeName): AttributeDef => ATTRIBUTES[name];

/** Every attribute's value: the defaults merged with what the log changed. */
export type Settings = Readonly<Record<AttributeName, SettingValue>>;
export type SettingsChanges = Readonly<Partial<Record<AttributeName, SettingValue>>>;

export const DEFAULT_SETTINGS: Settings = Object.fromEntries(ATTRIBUTE_NAMES.map((name) => [name, ATTRIBUTES[name].default])) as Settings;

export const SECRET_ATTRIBUTES = ATTRIBUTE_NAMES.filter((name) => attributeDef(name).secret);

/** The key restrictions of the settings, as SSH keys are checked against them (src/domain/ssh-keys.ts). */
export const keyRestrictionsOf = (settings: Settings): KeyRestrictions => ({
  rsa_key_restriction: settings.rsa_key_restriction as number,
  dsa_key_restriction: settings.dsa_key_restriction as number,
  ecdsa_key_restriction: settings.ecdsa_key_restriction as number,
  ed25519_key_restriction: settings.ed25519_key_restriction as number,
});
