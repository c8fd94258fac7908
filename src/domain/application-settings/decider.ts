import { z } from 'zod';
import { VISIBILITIES } from '../access.js';
import { type Decider, unhandled } from '../decider.js';
import { invalid } from '../errors.js';
import type { EventOf, EventSchemas } from '../events.js';
import { ATTRIBUTE_NAMES, DEFAULT_SETTINGS, attributeDef, type AttributeDef, type AttributeName, type Settings, type SettingsChanges, type SettingValue } from './attributes.js';
import { isBlank, validateSettings } from './validation.js';

/**
 * The instance's application settings: one aggregate, one stream. An event carries the
 * attributes a change set, secrets encrypted (src/commands/application-settings.ts); the
 * settings are the defaults with every change applied in turn.
 */

export const APPLICATION_SETTINGS_STREAM = 'application-settings';
export const applicationSettingsStreamId = () => APPLICATION_SETTINGS_STREAM;

/** A sealed secret: `v1.<iv>.<tag>.<ciphertext>`, base64url (src/security/settings-secrets.ts). */
export const SEALED_SECRET = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function valueSchema(def: AttributeDef): z.ZodType {
  if (def.secret) return z.string().regex(SEALED_SECRET).nullable();
  switch (def.kind) {
    case 'string':
      return z.string().nullable();
    case 'boolean':
      return z.boolean();
    case 'integer':
      return z.int().nullable();
    case 'float':
      return z.number().nullable();
    case 'strings':
      return z.array(z.string()).nullable();
    case 'integers':
      return z.array(z.int()).nullable();
    case 'visibility':
      return z.enum(VISIBILITIES);
    default:
      return unhandled(def.kind);
  }
}

export const WRITABLE_ATTRIBUTES = ATTRIBUTE_NAMES.filter((name) => !attributeDef(name).readOnly);

const changesSchema = z.strictObject(Object.fromEntries(WRITABLE_ATTRIBUTES.map((name) => [name, valueSchema(attributeDef(name)).optional()])));

export const applicationSettingsEvents = {
  ApplicationSettingsChanged: z.strictObject({ changes: changesSchema }),
} satisfies EventSchemas;

export type ApplicationSettingsEvent = EventOf<typeof applicationSettingsEvents>;

export interface ApplicationSettingsState {
  /** What the log set, over the defaults (secrets sealed). */
  readonly values: SettingsChanges;
}

export interface UpdateApplicationSettings {
  readonly type: 'UpdateApplicationSettings';
  /** Normalized (`normalizeChanges`), secrets sealed. */
  readonly changes: SettingsChanges;
}
export type ApplicationSettingsCommand = UpdateApplicationSettings;

/** The settings: the defaults, then what the log set. */
export const settingsOf = (values: SettingsChanges): Settings => ({ ...DEFAULT_SETTINGS, ...values });

const sameValue = (a: SettingValue | undefined, b: SettingValue | undefined) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

const VISIBILITY_LEVELS: Readonly<Record<string, string>> = { '0': 'private', '10': 'internal', '20': 'public' };

/**
 * What GitLab's setters make of the parameters: visibility levels by name, the instance's host
 * always allowed by the asset proxy, OAuth sources limited to the configured providers (none),
 * blank durations as never, list entries stripped.
 */
export function normalizeChanges(changes: SettingsChanges, facts: { host: string }): SettingsChanges {
  const out: Record<string, SettingValue> = { ...changes };
  for (const [name, value] of Object.entries(out)) {
    // Grape's CommaSeparatedToArray: `value.split(',').map(&:strip)`, so an empty text is an empty list.
    if (Array.isArray(value) && attributeDef(name as AttributeName).kind === 'strings') {
      out[name] = value.length === 1 && value[0] === '' ? [] : (value as string[]).map((v) => v.trim());
    }
  }
  if (out.enabled_git_access_protocol === 'nil') out.enabled_git_access_protocol = null;
  if ('archive_builds_in_human_readable' in out && isBlank(out.archive_builds_in_human_readable)) out.archive_builds_in_human_readable = null;
  if (out.restricted_visibility_levels) {
    out.restricted_visibility_levels = (out.restricted_visibility_levels as string[]).map((level) => VISIBILITY_LEVELS[level] ?? level);
  }
  if (out.disabled_oauth_sign_in_sources) out.disabled_oauth_sign_in_sources = [];
  if (out.asset_proxy_whitelist) {
    const list = out.asset_proxy_whitelist as string[];
    out.asset_proxy_whitelist = list.includes(facts.host) ? list : [...list, facts.host];
  }
  return out;
}

function decide(command: ApplicationSettingsCommand, state: ApplicationSettingsState): ApplicationSettingsEvent[] {
  switch (command.type) {
    case 'UpdateApplicationSettings': {
      const current = settingsOf(state.values);
      const changes = Object.fromEntries(Object.entries(command.changes).filter(([name, value]) => !sameValue(current[name as AttributeName], value)));
      const errors = validateSettings({ ...current, ...changes });
      if (Object.keys(errors).length > 0) throw invalid(errors);
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'ApplicationSettingsChanged', data: { changes } }];
    }
    default:
      return unhandled(command.type);
  }
}

function evolve(state: ApplicationSettingsState, event: ApplicationSettingsEvent): ApplicationSettingsState {
  switch (event.type) {
    case 'ApplicationSettingsChanged':
      return { values: { ...state.values, ...(event.data.changes as SettingsChanges) } };
    default:
      return state;
  }
}

export const applicationSettingsDecider: Decider<ApplicationSettingsCommand, ApplicationSettingsEvent, ApplicationSettingsState, void> = {
  initialState: () => ({ values: {} }),
  evolve,
  decide,
};
