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
  default_artifacts_expire_in: str('30 days'),
  default_branch_protection: int(2, { values: [0, 1, 2] }),
  default_ci_config_path: str(),
  default_group_visibility: visibility,
  default_project_creation: int(2, { values: [0, 1, 2] }),
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
  elasticsearch_search: es(bool(false)),
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
  geo_node_allowed_ips: str('0.0.0.0/0, ::/0', { feature: 'geo' }),
  geo_status_timeout: int(10, { feature: 'geo' }),
  gitaly_timeout_default: int(55),
  gitaly_timeout_fast: int(10),
  gitaly_timeout_medium: int(30),
  gravatar_enabled: bool(true),
  home_page_url: str(),
  instance_statistics_visibility_private: bool(false),
  local_markdown_version: int(0),
  max_attachment_size: int(10),
  outbound_local_requests_whitelist: { kind: 'strings', default: [] },
  password_authentication_enabled_for_web: bool(true),
  performance_bar_allowed_group_id: int(null, { readOnly: true }),
  plantuml_enabled: bool(false),
  plantuml_url: str(),
  polling_interval_multiplier: { kind: 'float', default: 1 },
  repository_storages: { kind: 'strings', default: ['default'] },
  restricted_visibility_levels: { kind: 'strings', default: [] },
  rsa_key_restriction: keyRestriction('rsa'),
  session_expire_delay: int(10080),
  sign_in_text: str(),
  signup_enabled: bool(true),
  terminal_max_session_time: int(0),
  terms: str(),
  user_oauth_applications: bool(true),
  user_show_add_ssh_key_message: bool(true),
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
