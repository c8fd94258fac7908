import type { Db } from '../database/database.js';
import { SECRET_ATTRIBUTES, type SettingsChanges, type SettingValue } from '../domain/application-settings/attributes.js';
import { normalizeChanges } from '../domain/application-settings/decider.js';
import { isBlank } from '../domain/application-settings/validation.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { openSecret, sealSecret } from '../security/settings-secrets.js';
import { run } from './kernel/run.js';
import { applicationSettings } from '../domain/application-settings/aggregate.js';
import type { Writer } from './kernel/context.js';


/**
 * Seals the secrets of a change (a blank one clears it); a secret given again unchanged is
 * no change (sealing twice never gives the same text).
 */
async function sealSecrets(db: Db, changes: SettingsChanges): Promise<SettingsChanges> {
  const present = SECRET_ATTRIBUTES.filter((name) => name in changes);
  if (present.length === 0) return changes;
  const current = await currentSettings(db);
  const sealed: Record<string, SettingValue> = { ...changes };
  for (const name of present) {
    const value = changes[name];
    const before = current[name];
    if (isBlank(value)) sealed[name] = null;
    else if (typeof before === 'string' && (await openSecret(db, name, before)) === value) delete sealed[name];
    else sealed[name] = await sealSecret(db, name, value as string);
  }
  return sealed;
}

/** PUT /application/settings: the changes as GitLab's setters take them, validated by the model's rules. */
export async function updateApplicationSettings(w: Writer, changes: SettingsChanges, facts: { host: string }) {
  const sealed = await sealSecrets(w.ctx.db, normalizeChanges(changes, facts));
  return run(w, applicationSettings, undefined, { type: 'UpdateApplicationSettings', changes: sealed });
}
