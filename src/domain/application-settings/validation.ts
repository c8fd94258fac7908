import type { FieldErrors } from '../errors.js';
import { VISIBILITIES } from '../access.js';
import { FORBIDDEN_KEY_VALUE, SSH_KEY_TYPES } from '../ssh-keys.js';
import { IMPORT_SOURCES, type Settings } from './attributes.js';
import { parseDuration } from '../duration.js';

/** GitLab's Settings.gitlab.max_request_duration_seconds (gitlab.yml default), the bound of gitaly_timeout_default. */
const MAX_REQUEST_DURATION_SECONDS = 57;
/** Gitlab::Git::Diff::DEFAULT_MAX_PATCH_BYTES and MAX_PATCH_BYTES_UPPER_BOUND. */
const DIFF_MAX_PATCH_BYTES = [100 * 1024, 500 * 1024] as const;
/** ApplicationSetting::DEFAULT_MINIMUM_PASSWORD_LENGTH and Devise.password_length.max (config/initializers/devise.rb). */
const PASSWORD_LENGTH = [8, 128] as const;
/** Gitlab::Pages::MAX_SIZE (1 TB) in megabytes: max_pages_size stays below it. */
const MAX_PAGES_SIZE_MB = 1024 * 1024;
/** The storages gitlab.yml configures: forgelog has one. */
export const REPOSITORY_STORAGES = ['default'];

export const isBlank = (value: unknown) =>
  value === null || value === undefined || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);

const isUrl = (value: string) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
};

/** The seconds of archive_builds_in_human_readable (null: never archived; undefined: not a duration). */
export const archiveBuildsSeconds = (settings: Settings): number | null | undefined =>
  isBlank(settings.archive_builds_in_human_readable) ? null : parseDuration(settings.archive_builds_in_human_readable as string);

/**
 * ApplicationSetting's model validations (app/models/application_setting.rb, GitLab 12, and
 * EE's), on the settings as they would be after a change, in the model's order, with Rails'
 * messages. Grape's parameter checks come before, in the route.
 */
export function validateSettings(s: Settings): FieldErrors {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const num = (field: keyof Settings) => s[field] as number | null;
  const atLeast = (field: keyof Settings, min: number) => {
    const value = num(field);
    if (value !== null && value < min) add(field, `must be greater than or equal to ${min}`);
  };
  const above = (field: keyof Settings, min: number) => {
    const value = num(field);
    if (value !== null && value <= min) add(field, `must be greater than ${min}`);
  };
  const atMost = (field: keyof Settings, max: number) => {
    const value = num(field);
    if (value !== null && value > max) add(field, `must be less than or equal to ${max}`);
  };
  const below = (field: keyof Settings, max: number) => {
    const value = num(field);
    if (value !== null && value >= max) add(field, `must be less than ${max}`);
  };
  const present = (field: keyof Settings, when: unknown, message = "can't be blank") => {
    if (when && isBlank(s[field])) add(field, message);
  };
  const url = (field: keyof Settings, when: unknown = true) => {
    const value = s[field];
    if (when && !isBlank(value) && !isUrl(value as string)) add(field, 'must be a valid URL');
  };

  atLeast('session_expire_delay', 0);
  present('minimum_password_length', true);
  atLeast('minimum_password_length', PASSWORD_LENGTH[0]);
  atMost('minimum_password_length', PASSWORD_LENGTH[1]);
  url('home_page_url');
  url('help_page_support_url');
  url('after_sign_out_path');
  const email = s.admin_notification_email as string | null;
  if (!isBlank(email) && !/^[^@\s]+@[^@\s]+$/.test(email!)) add('admin_notification_email', 'is invalid');
  atLeast('two_factor_grace_period', 0);
  const recaptcha = s.recaptcha_enabled || s.login_recaptcha_protection_enabled;
  present('recaptcha_site_key', recaptcha);
  present('recaptcha_private_key', recaptcha);
  present('akismet_api_key', s.akismet_enabled);
  if (s.unique_ips_limit_enabled) {
    present('unique_ips_limit_per_user', true);
    atLeast('unique_ips_limit_per_user', 1);
    present('unique_ips_limit_time_window', true);
    atLeast('unique_ips_limit_time_window', 0);
  }
  present('plantuml_url', s.plantuml_enabled);
  present('sourcegraph_url', s.sourcegraph_enabled);
  present('snowplow_collector_hostname', s.snowplow_enabled);
  above('max_attachment_size', 0);
  present('max_artifacts_size', true);
  above('max_artifacts_size', 0);
  present('default_artifacts_expire_in', true);
  if (!isBlank(s.default_artifacts_expire_in) && parseDuration(s.default_artifacts_expire_in as string) === undefined) {
    add('default_artifacts_expire_in', 'is not a correct duration');
  }
  present('max_pages_size', true);
  atLeast('max_pages_size', 0);
  below('max_pages_size', MAX_PAGES_SIZE_MB);
  above('container_registry_token_expire_delay', 0);
  const storages = (s.repository_storages ?? []) as readonly string[];
  present('repository_storages', true);
  const unknownStorages = storages.filter((name) => !REPOSITORY_STORAGES.includes(name));
  if (unknownStorages.length > 0) add('repository_storages', `can't include: ${unknownStorages.join(', ')}`);
  present('domain_blacklist', s.domain_blacklist_enabled, 'Domain blacklist cannot be empty if Blacklist is enabled.');
  present('housekeeping_incremental_repack_period', true);
  above('housekeeping_incremental_repack_period', 0);
  present('housekeeping_full_repack_period', true);
  if (num('housekeeping_incremental_repack_period') !== null) atLeast('housekeeping_full_repack_period', num('housekeeping_incremental_repack_period')!);
  present('housekeeping_gc_period', true);
  if (num('housekeeping_full_repack_period') !== null) atLeast('housekeeping_gc_period', num('housekeeping_full_repack_period')!);
  atLeast('terminal_max_session_time', 0);
  atLeast('polling_interval_multiplier', 0);
  atLeast('gitaly_timeout_default', 0);
  atMost('gitaly_timeout_default', MAX_REQUEST_DURATION_SECONDS);
  atLeast('gitaly_timeout_medium', 0);
  if (num('gitaly_timeout_default') !== null) atMost('gitaly_timeout_medium', num('gitaly_timeout_default')!);
  if (num('gitaly_timeout_fast') !== null) atLeast('gitaly_timeout_medium', num('gitaly_timeout_fast')!);
  atLeast('gitaly_timeout_fast', 0);
  if (num('gitaly_timeout_default') !== null) atMost('gitaly_timeout_fast', num('gitaly_timeout_default')!);
  atLeast('diff_max_patch_bytes', DIFF_MAX_PATCH_BYTES[0]);
  atMost('diff_max_patch_bytes', DIFF_MAX_PATCH_BYTES[1]);
  if (!isBlank(s.commit_email_hostname) && (s.commit_email_hostname as string).includes('@')) add('commit_email_hostname', 'is invalid');
  const archive = archiveBuildsSeconds(s);
  if (archive === undefined) add('archive_builds_in_human_readable', 'is not a correct duration');
  else if (archive !== null && archive < 86400) add('archive_builds_in_seconds', 'must be greater than or equal to 86400');
  atLeast('local_markdown_version', 0);
  if ((num('local_markdown_version') ?? 0) >= 65536) add('local_markdown_version', 'must be less than 65536');
  present('asset_proxy_url', s.asset_proxy_enabled);
  url('asset_proxy_url', s.asset_proxy_enabled);
  present('asset_proxy_secret_key', s.asset_proxy_enabled);
  url('static_objects_external_storage_url');
  present('static_objects_external_storage_auth_token', !isBlank(s.static_objects_external_storage_url));
  atLeast('push_event_hooks_limit', 0);
  atLeast('push_event_activities_limit', 0);
  above('snippet_size_limit', 0);
  if (SSH_KEY_TYPES.every((type) => s[`${type}_key_restriction`] === FORBIDDEN_KEY_VALUE)) add('allowed_key_types', "can't be blank");
  for (const level of (s.restricted_visibility_levels ?? []) as readonly string[]) {
    if (!(VISIBILITIES as readonly string[]).includes(level)) add('restricted_visibility_levels', `'${level}' is not a valid visibility level`);
  }
  for (const source of (s.import_sources ?? []) as readonly string[]) {
    // GitLab: validates_each :import_sources, "'%{source}' is not a import source" (sic).
    if (!IMPORT_SOURCES.includes(source)) add('import_sources', `'${source}' is not a import source`);
  }
  if (s.enforce_terms && isBlank(s.terms)) add('base', 'You need to set terms to be enforced');
  const external = s.external_authorization_service_enabled;
  present('external_authorization_service_default_label', external);
  url('external_authorization_service_url', external);
  if (external) {
    above('external_authorization_service_timeout', 0);
    atMost('external_authorization_service_timeout', 10);
  }
  present('external_auth_client_key', !isBlank(s.external_auth_client_cert));
  if (s.eks_integration_enabled) {
    if (!/^\d{12}$/.test((s.eks_account_id as string | null) ?? '')) add('eks_account_id', 'must be a 12-digit number');
    const keyId = ((s.eks_access_key_id as string | null) ?? '').length;
    if (keyId < 16) add('eks_access_key_id', 'is too short (minimum is 16 characters)');
    if (keyId > 128) add('eks_access_key_id', 'is too long (maximum is 128 characters)');
    present('eks_secret_access_key', true);
  }
  const ciPath = s.default_ci_config_path as string | null;
  if (!isBlank(ciPath) && /(\.{2}|^\/)/.test(ciPath!)) add('default_ci_config_path', 'cannot include leading slash or directory traversal.');
  if ((ciPath ?? '').length > 255) add('default_ci_config_path', 'is too long (maximum is 255 characters)');
  if (((s.outbound_local_requests_whitelist ?? []) as readonly string[]).length > 1000) add('outbound_local_requests_whitelist', 'is too long (maximum is 1000 entries)');
  atLeast('issues_create_limit', 0);
  atLeast('raw_blob_request_limit', 0);
  // EE (ee/app/models/ee/application_setting.rb).
  present('mirror_max_capacity', true);
  above('mirror_max_capacity', 0);
  present('mirror_capacity_threshold', true);
  above('mirror_capacity_threshold', 0);
  const [threshold, capacity] = [num('mirror_capacity_threshold'), num('mirror_max_capacity')];
  // GitLab: EE::ApplicationSetting#mirror_capacity_threshold_less_than, its message as written.
  if (threshold !== null && capacity !== null && threshold > capacity) {
    add('mirror_capacity_threshold', "Project's mirror capacity threshold can't be higher than it's maximum capacity");
  }
  present('repository_size_limit', true);
  atLeast('repository_size_limit', 0);
  atLeast('shared_runners_minutes', 0);
  atLeast('deletion_adjourned_period', 0);
  atMost('deletion_adjourned_period', 90);
  above('geo_status_timeout', 0);
  if (((s.email_additional_text as string | null) ?? '').length > 10000) add('email_additional_text', 'is too long (maximum is 10000 characters)');
  return errors;
}
