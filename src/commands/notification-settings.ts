import { notificationSettingEvents, notificationSettingsDecider, notificationSettingsStreamId } from '../domain/notification-settings.js';
import { defineAggregate } from './aggregate.js';

/** One user's notification settings, global and per group or project (src/domain/notification-settings.ts). */
export const notificationSettings = defineAggregate({
  name: 'notification_settings',
  streamId: notificationSettingsStreamId,
  events: notificationSettingEvents,
  decider: notificationSettingsDecider,
});
