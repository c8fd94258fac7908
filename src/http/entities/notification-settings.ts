import type { EmailEvent, NotificationSetting } from '../../domain/notification-settings.js';

/**
 * Entities::NotificationSetting: level, and `events` only when the level is `custom`, each
 * of the setting's email events by its reader — nil for a flag never set, except
 * `failed_pipeline`, whose reader answers true for nil.
 */
export function toNotificationSetting(setting: NotificationSetting, events: readonly EmailEvent[]) {
  const out: Record<string, unknown> = { level: setting.level };
  if (setting.level === 'custom') {
    out.events = Object.fromEntries(events.map((event) => [event, setting.events[event] ?? (event === 'failed_pipeline' ? true : null)]));
  }
  return out;
}

/** Entities::GlobalNotificationSetting: the same, and the user's notification_email. */
export function toGlobalNotificationSetting(setting: NotificationSetting, events: readonly EmailEvent[], notificationEmail: string) {
  return { ...toNotificationSetting(setting, events), notification_email: notificationEmail };
}
