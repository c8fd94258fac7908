import type { Db } from '../../database/database.js';
import { type Settings, keyRestrictionsOf } from '../../domain/application-settings/attributes.js';
import type { KeyRestrictions } from '../../domain/ssh-keys.js';
import { settingsOf } from '../../domain/application-settings/decider.js';

/**
 * The instance's settings as the other areas read them (GitLab's Gitlab::CurrentSettings):
 * the defaults with what the log set. Secrets stay sealed here.
 */
export async function currentSettings(db: Db): Promise<Settings> {
  return settingsOf((await settingsRow(db))?.attributes ?? {});
}

/** The row (undefined while nothing was ever changed: the defaults, no timestamps). */
export const settingsRow = (db: Db) => db.selectFrom('application_settings').selectAll().where('id', '=', 1).executeTakeFirst();

/**
 * The SSH key restrictions per key type, for the keys areas (deploy keys, SSH keys): 0 any
 * size, -1 the type is forbidden, otherwise the minimum size in bits (GitLab's
 * KeyRestrictionValidator; the sizes each type allows are SSH_KEY_SIZES in src/domain/ssh-keys.ts).
 */
export async function keyRestrictions(db: Db): Promise<KeyRestrictions> {
  return keyRestrictionsOf(await currentSettings(db));
}
