import type { Db } from '../../database/database.js';
import { defaultSetting, type NotificationSetting, type NotificationSource } from '../../domain/notification-settings.js';

/**
 * The user's setting for a source (null: the global one), or GitLab's default for a setting
 * never changed (GitLab creates that row on first read; here it is simply the default).
 */
export async function findNotificationSetting(db: Db, userId: number, source: NotificationSource | null): Promise<NotificationSetting> {
  let query = db.selectFrom('notification_settings').select(['level', 'events']).where('user_id', '=', userId);
  query = source === null ? query.where('source_type', 'is', null) : query.where('source_type', '=', source.type).where('source_id', '=', source.id);
  return (await query.executeTakeFirst()) ?? defaultSetting(source);
}
