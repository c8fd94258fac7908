import type { EnvironmentsReadTables } from './environments/tables.js';
import type { FeatureFlagsReadTables } from './feature-flags/tables.js';
import type { EpicsReadTables } from './epics/tables.js';
import type { LabelsReadTables } from './labels/tables.js';
import type { MergeRequestsReadTables } from './merge-requests/tables.js';
import type { MilestonesReadTables } from './milestones/tables.js';
import type { TodosReadTables } from './todos/tables.js';
import type { BroadcastMessagesReadTables } from './broadcast-messages/tables.js';
import type { DeployKeysReadTables } from './deploy-keys/tables.js';
import type { ApplicationSettingsReadTables } from './application-settings/tables.js';
import type { GroupsReadTables } from './groups/tables.js';
import type { IntegrationsReadTables } from './integrations/tables.js';
import type { MembersReadTables } from './members/tables.js';
import type { NotificationSettingsReadTables } from './notification-settings/tables.js';
import type { ProjectsReadTables } from './projects/tables.js';
import type { ProtectedBranchesReadTables } from './protected-branches/tables.js';
import type { UsersReadTables } from './users.js';
import type { ScimReadTables } from './scim/tables.js';
import type { GeoNodesReadTables } from './geo-nodes/tables.js';
import type { ContainerRepositoriesReadTables } from './container-repositories/tables.js';
import type { RepositoryReadTables } from './repository/tables.js';
import type { UploadsReadTables } from './uploads/tables.js';

/** The read tables of every projection, gathered for the Kysely `Database` type. */
export interface ReadTables extends UsersReadTables, GroupsReadTables, ProjectsReadTables, MembersReadTables, EnvironmentsReadTables, BroadcastMessagesReadTables, DeployKeysReadTables, NotificationSettingsReadTables, ProtectedBranchesReadTables, ApplicationSettingsReadTables, IntegrationsReadTables, FeatureFlagsReadTables, ScimReadTables, GeoNodesReadTables, EpicsReadTables, TodosReadTables, ContainerRepositoriesReadTables, MilestonesReadTables, LabelsReadTables, RepositoryReadTables, MergeRequestsReadTables, UploadsReadTables {}
