import type { Db } from '../../database/database.js';
import type { BroadcastMessageRow } from './tables.js';

/** Every message (select without order: the route orders and pages it). */
export const broadcastMessagesQuery = (db: Db) => db.selectFrom('broadcast_messages').selectAll();

export const findBroadcastMessage = (db: Db, id: number): Promise<BroadcastMessageRow | undefined> =>
  db.selectFrom('broadcast_messages').selectAll().where('id', '=', id).executeTakeFirst();
