import type { ColumnType, Selectable } from 'kysely';
import type { EventFlags, NotificationLevel } from '../../domain/notification-settings.js';
import type { StreamVersionsTable } from '../stream-versions.js';

/** One row per setting a user changed: the global one has no source (GitLab's `source` nil). */
export interface NotificationSettingsTable {
  user_id: number;
  source_type: 'Namespace' | 'Project' | null;
  source_id: number | null;
  level: NotificationLevel;
  /** The flags set so far; one never set is absent. */
  events: ColumnType<EventFlags, string, string>;
}

export interface NotificationSettingsReadTables {
  notification_settings: NotificationSettingsTable;
  notification_settings_stream_versions: StreamVersionsTable;
}

export type NotificationSettingRow = Selectable<NotificationSettingsTable>;

declare module '../../database/database.js' {
  interface Database extends NotificationSettingsReadTables {}
}
