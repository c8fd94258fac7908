import { sql } from 'kysely';
import type { Db } from '../database/database.js';

/**
 * Secrets of this instance kept outside the event log (table `instance_keys`, each row made by
 * the migration that needs it): the runners tokens' HMAC key, the application settings'
 * encryption key. Read once per database and name.
 */
const cache = new WeakMap<Db, Map<string, Promise<string>>>();

export function instanceKey(db: Db, name: string): Promise<string> {
  let byName = cache.get(db);
  if (!byName) cache.set(db, (byName = new Map()));
  let key = byName.get(name);
  if (!key) {
    key = sql<{ secret: string }>`select secret from instance_keys where name = ${name}`.execute(db).then(({ rows }) => {
      if (!rows[0]) throw new Error(`instance key ${name} is missing: run the migrations (forgelog migrate)`);
      return rows[0].secret;
    });
    key.catch(() => byName.delete(name));
    byName.set(name, key);
  }
  return key;
}
