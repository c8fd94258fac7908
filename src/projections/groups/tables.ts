import type { Selectable } from 'kysely';
import type { Visibility } from '../../domain/access.js';
import type { ProjectCreationLevel, SubgroupCreationLevel } from '../../domain/groups/settings.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';

/**
 * The groups projection's tables. `namespaces` is GitLab's table: it holds groups and the
 * personal namespaces of users (kept from the users' events, src/projections/groups/personal-namespaces.ts).
 */


/** Groups and personal (user) namespaces; `traversal_ids` runs from the root to this namespace. */
export interface NamespacesTable {
  id: number;
  kind: 'user' | 'group';
  name: string;
  path: string;
  full_name: string;
  full_path: string;
  parent_id: number | null;
  owner_id: number | null;
  traversal_ids: number[];
  description: string;
  visibility: Visibility;
  share_with_group_lock: boolean;
  require_two_factor_authentication: boolean;
  two_factor_grace_period: number;
  project_creation_level: ProjectCreationLevel;
  auto_devops_enabled: boolean | null;
  subgroup_creation_level: SubgroupCreationLevel;
  emails_disabled: boolean | null;
  mentions_disabled: boolean | null;
  lfs_enabled: boolean;
  request_access_enabled: boolean;
  avatar_url: string | null;
  file_template_project_id: number | null;
  shared_runners_minutes_limit: number | null;
  extra_shared_runners_minutes_limit: number | null;
  runners_token: string | null;
  pending_delete: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
  stream_version: number;
  /** The upload `avatar_url` serves: its SHA-256 in `uploads` (migration 0051). Never shown by the API. */
  avatar_sha256: string | null;
}

/** GitLab's group custom attributes (admin-only key/value pairs). */
export interface GroupCustomAttributesTable {
  group_id: number;
  key: string;
  value: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface GroupsReadTables {
  namespaces: NamespacesTable;
  group_custom_attributes: GroupCustomAttributesTable;
  namespaces_stream_versions: StreamVersionsTable;
}

export type NamespaceRow = Selectable<NamespacesTable>;
export type GroupCustomAttributeRow = Selectable<GroupCustomAttributesTable>;

declare module '../../database/database.js' {
  interface Database extends GroupsReadTables {}
}
