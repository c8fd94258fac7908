import { ATTRIBUTE_NAMES, attributeDef, type Settings, type SettingValue } from '../../domain/application-settings/attributes.js';
import { licensed, type Plan } from '../../domain/policy/licensed.js';

export interface SettingsTimestamps {
  readonly created_at: Date | null;
  readonly updated_at: Date | null;
}

/** GitLab's Gitlab.config.gitlab.host: the external URL's host name. */
export const instanceHost = (externalUrl: string) => new URL(externalUrl).hostname;

/**
 * GitLab's Entities::ApplicationSetting (and EE's): every visible attribute but the two
 * secrets it drops (asset_proxy_secret_key, eks_secret_access_key) — the others are shown
 * to administrators in clear, as GitLab 12 does; paid attributes only under their licence;
 * the legacy names beside the current ones. `settings` has its secrets opened.
 */
export function toApplicationSettings(settings: Settings, timestamps: SettingsTimestamps, options: { plan: Plan; host: string }) {
  const out: Record<string, SettingValue | string> = { id: 1 };
  for (const name of ATTRIBUTE_NAMES) {
    const def = attributeDef(name);
    if (def.hidden || (def.feature && !licensed(options.plan, def.feature))) continue;
    out[name] = settings[name];
  }
  out.commit_email_hostname = (settings.commit_email_hostname as string | null) || `users.noreply.${options.host}`;
  if ('elasticsearch_url' in out) out.elasticsearch_url = String(settings.elasticsearch_url ?? '').split(',').map((url) => url.trim());
  out.created_at = timestamps.created_at?.toISOString() ?? null;
  out.updated_at = timestamps.updated_at?.toISOString() ?? null;
  // Legacy names (GitLab: "support legacy names, can be removed in v5").
  out.password_authentication_enabled = settings.password_authentication_enabled_for_web;
  out.signin_enabled = settings.password_authentication_enabled_for_web;
  out.allow_local_requests_from_hooks_and_services = settings.allow_local_requests_from_web_hooks_and_services;
  return out;
}
