import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import type { GroupEvent } from '../../domain/groups/events.js';
import { notificationSettingEvents, type NotificationSettingEvent } from '../../domain/notification-settings.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { UserEvent } from '../../domain/users.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

/** Deletions elsewhere that take settings with them (GitLab: dependent rows of the user, group or project). */
const FOREIGN_EVENT_TYPES = ['UserDeleted', 'GroupDeleted', 'ProjectDeleted'] as const;

type ForeignEvent = Extract<UserEvent | GroupEvent | ProjectEvent, { type: (typeof FOREIGN_EVENT_TYPES)[number] }>;

/**
 * Inline: the API answers with the setting it just wrote. An event carries the whole
 * setting, so applying it replaces the row; the stream version guards against replays. The
 * other areas' deletions delete by absolute conditions.
 */
export const notificationSettingsProjector: Projector = {
  name: 'notification_settings',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(notificationSettingEvents), ...FOREIGN_EVENT_TYPES],
  tables: ['notification_settings', 'notification_settings_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (NotificationSettingEvent | ForeignEvent) & ProjectedEvent;
    switch (event.type) {
      case 'UserDeleted':
        await trx.deleteFrom('notification_settings').where('user_id', '=', event.data.id).execute();
        return;
      case 'GroupDeleted':
      case 'ProjectDeleted': {
        const sourceType = event.type === 'GroupDeleted' ? 'Namespace' : 'Project';
        await trx.deleteFrom('notification_settings').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
        return;
      }
    }
    if (!(await claimStreamVersion(trx, 'notification_settings_stream_versions', stored))) return;
    switch (event.type) {
      case 'NotificationSettingChanged': {
        const { user_id, source_type, source_id, level, events } = event.data;
        const ofSetting = trx
          .deleteFrom('notification_settings')
          .where('user_id', '=', user_id)
          .where((eb) => (source_type === null ? eb('source_type', 'is', null) : eb.and([eb('source_type', '=', source_type), eb('source_id', '=', source_id)])));
        await ofSetting.execute();
        await trx.insertInto('notification_settings').values({ user_id, source_type, source_id, level, events: JSON.stringify(events) }).execute();
        return;
      }
      default:
        return unhandled(event);
    }
  },
};
