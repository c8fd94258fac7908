import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../database.js';

const keys = new WeakMap<Db, Promise<string>>();

/** The instance key runners tokens derive from (created by migration 0012_kernel, outside the log). */
function instanceKey(db: Db): Promise<string> {
  let key = keys.get(db);
  if (!key) {
    key = sql<{ secret: string }>`select secret from instance_keys where name = 'runners_token'`.execute(db).then(({ rows }) => {
      if (!rows[0]) throw new Error('instance key runners_token is missing (migration 0012_kernel)');
      return rows[0].secret;
    });
    key.catch(() => keys.delete(db));
    keys.set(db, key);
  }
  return key;
}

/**
 * Runner registration tokens of groups and projects. No secret goes into the event log
 * (DESIGN.md): a token is derived from the resource id with a key kept outside it.
 */
async function runnersToken(db: Db, kind: 'group' | 'project', id: number): Promise<string> {
  const key = await instanceKey(db);
  return createHmac('sha256', key).update(`${kind}-runners-token:${id}`).digest('base64url').slice(0, 20);
}

export const groupRunnersToken = (db: Db, groupId: number) => runnersToken(db, 'group', groupId);
export const projectRunnersToken = (db: Db, projectId: number) => runnersToken(db, 'project', projectId);
