import { createHmac } from 'node:crypto';
import type { Db } from '../database/database.js';
import { instanceKey } from './instance-keys.js';

/**
 * Runner registration tokens of groups and projects. No secret goes into the event log
 * (DESIGN.md): a token is derived from the resource id with a key kept outside it.
 */
async function runnersToken(db: Db, kind: 'group' | 'project', id: number): Promise<string> {
  const key = await instanceKey(db, 'runners_token');
  return createHmac('sha256', key).update(`${kind}-runners-token:${id}`).digest('base64url').slice(0, 20);
}

export const groupRunnersToken = (db: Db, groupId: number) => runnersToken(db, 'group', groupId);
export const projectRunnersToken = (db: Db, projectId: number) => runnersToken(db, 'project', projectId);
