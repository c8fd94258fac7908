import type { ApplicationSettingsReadTables } from './application-settings/tables.js';
import type { GroupsReadTables } from './groups/tables.js';
import type { MembersReadTables } from './members/tables.js';
import type { ProjectsReadTables } from './projects/tables.js';
import type { UsersReadTables } from './users.js';

/** The read tables of every projection, gathered for the Kysely `Database` type. */
export interface ReadTables extends UsersReadTables, GroupsReadTables, ProjectsReadTables, MembersReadTables, ApplicationSettingsReadTables {}
