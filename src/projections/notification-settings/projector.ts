import type { Db } from '../../database/database.js';
import { defineProjector, type Projected } from '../projector.js';

/** A group's or project's deletion takes the settings of that source with it. */
async function deleteOfSource(event: Projected<'GroupDeleted' | 'ProjectDeleted'>, trx: Db) {
  const sourceType = event.type === 'GroupDeleted' ? 'Namespace' : 'Project';
  await trx.deleteFrom('notification_settings').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
}

/**
 * Inline: the API answers with the setting it just wrote. An event carries the whole
 * setting, so applying it replaces the row. The other areas' deletions (GitLab: dependent
 * rows of the user, group or project) delete by absolute conditions.
 */
export const notificationSettingsProjector = defineProjector({
  name: 'notification_settings',
  tables: ['notification_settings'],
  on: {
    NotificationSettingChanged: async ({ data }, trx) => {
      const { user_id, source_type, source_id, level, events } = data;
      const ofSetting = trx
        .deleteFrom('notification_settings')
        .where('user_id', '=', user_id)
        .where((eb) => (source_type === null ? eb('source_type', 'is', null) : eb.and([eb('source_type', '=', source_type), eb('source_id', '=', source_id)])));
      await ofSetting.execute();
      await trx.insertInto('notification_settings').values({ user_id, source_type, source_id, level, events: JSON.stringify(events) }).execute();
    },
  },
  cascades: {
    UserDeleted: async ({ data }, trx) => trx.deleteFrom('notification_settings').where('user_id', '=', data.id).execute(),
    GroupDeleted: deleteOfSource,
    ProjectDeleted: deleteOfSource,
  },
});
