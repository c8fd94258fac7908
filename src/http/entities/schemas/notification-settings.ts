import { bool, entity, extend, nullable, str, values } from './dsl.js';

const level = values('disabled', 'participating', 'watch', 'global', 'mention', 'custom');

export const NotificationSetting = entity('Entities::NotificationSetting (`events` at the custom level, each flag null until set).', {
  level,
  events: { type: 'object', additionalProperties: nullable(bool) },
}, ['events']);

export const GlobalNotificationSetting = extend(NotificationSetting, 'Entities::GlobalNotificationSetting.', { notification_email: str });
