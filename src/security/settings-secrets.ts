import type { Db } from '../database/database.js';
import { SECRET_ATTRIBUTES, type Settings, type SettingValue } from '../domain/application-settings/attributes.js';
import { seal, unsealIfOurs } from './sealing.js';

/**
 * The application settings' secrets (akismet_api_key, external_auth_client_key…) never reach
 * the event log in clear (DESIGN.md): the log holds them sealed (src/security/sealing.ts)
 * under the instance key `application_settings`, which migration 0018 creates outside the
 * log. The attribute's name is the authenticated data.
 */
export const sealSecret = (db: Db, attribute: string, plaintext: string) => seal(db, 'application_settings', attribute, plaintext);

/**
 * The secret in clear, or null when this instance's key does not open it: a log imported from
 * another instance (`forgelog events import`) holds its secrets sealed under that instance's
 * key, which never travels. Such a secret reads as unset until an administrator sets it again.
 */
export const openSecret = (db: Db, attribute: string, sealed: string) => unsealIfOurs(db, 'application_settings', attribute, sealed);

/** The settings with their secrets in clear, for the administrators' GET. */
export async function openSecrets(db: Db, settings: Settings): Promise<Settings> {
  const opened: Record<string, SettingValue> = { ...settings };
  for (const name of SECRET_ATTRIBUTES) {
    const sealed = settings[name];
    if (typeof sealed === 'string') opened[name] = await openSecret(db, name, sealed);
  }
  return opened as Settings;
}
