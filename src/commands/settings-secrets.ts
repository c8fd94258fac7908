import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Db } from '../database.js';
import { instanceKey } from './instance-keys.js';
import { SECRET_ATTRIBUTES, type Settings, type SettingValue } from '../domain/application-settings/attributes.js';

/**
 * The application settings' secrets (akismet_api_key, external_auth_client_key…) never reach
 * the event log in clear (DESIGN.md): the log holds them sealed with AES-256-GCM under the
 * instance key `application_settings`, which migration 0018 creates outside the log. The
 * attribute's name is the authenticated data, so a sealed value cannot be moved to another.
 */
const settingsKey = async (db: Db) => Buffer.from(await instanceKey(db, 'application_settings'), 'hex');

export async function sealSecret(db: Db, attribute: string, plaintext: string): Promise<string> {
  const key = await settingsKey(db);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(attribute));
  const encrypted = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), encrypted.toString('base64url')].join('.');
}

export async function openSecret(db: Db, attribute: string, sealed: string): Promise<string> {
  const [version, iv, tag, encrypted] = sealed.split('.');
  if (version !== 'v1' || iv === undefined || tag === undefined || encrypted === undefined) throw new Error(`${attribute}: not a sealed secret`);
  const decipher = createDecipheriv('aes-256-gcm', await settingsKey(db), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(attribute));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(encrypted, 'base64url')), decipher.final()]).toString('utf8');
}

/** The settings with their secrets in clear, for the administrators' GET. */
export async function openSecrets(db: Db, settings: Settings): Promise<Settings> {
  const opened: Record<string, SettingValue> = { ...settings };
  for (const name of SECRET_ATTRIBUTES) {
    const sealed = settings[name];
    if (typeof sealed === 'string') opened[name] = await openSecret(db, name, sealed);
  }
  return opened as Settings;
}
