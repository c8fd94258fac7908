import type { ColumnType, Selectable } from 'kysely';
import type { SettingsChanges } from '../../domain/application-settings/attributes.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** The one row of the settings: what the log set over the defaults (secrets sealed). No row: all defaults. */
export interface ApplicationSettingsTable {
  id: number;
  attributes: ColumnType<SettingsChanges, string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApplicationSettingsReadTables {
  application_settings: ApplicationSettingsTable;
  application_settings_stream_versions: StreamVersionsTable;
}

export type ApplicationSettingsRow = Selectable<ApplicationSettingsTable>;

declare module '../../database/database.js' {
  interface Database extends ApplicationSettingsReadTables {}
}
