import type { StreamVersionsTable } from '../stream-versions.js';

/**
 * A user's access levels on a project (GitLab's project_authorizations) or a group: one row
 * per level some way in gives, with the latest `expires_at` among those ways (null: never).
 * The user's level on a date is the highest row not expired on it (src/projections/access.ts).
 */
export interface ProjectAuthorizationsTable {
  user_id: number;
  project_id: number;
  access_level: number;
  expires_at: string | null;
}

export interface GroupAuthorizationsTable {
  user_id: number;
  group_id: number;
  access_level: number;
  expires_at: string | null;
}

/** The projection's copy of the project shares, by group (what a group's deletion recomputes). */
export interface AuthorizationGroupLinksTable {
  group_id: number;
  project_id: number;
}

export interface AuthorizationsReadTables {
  project_authorizations: ProjectAuthorizationsTable;
  group_authorizations: GroupAuthorizationsTable;
  authorization_group_links: AuthorizationGroupLinksTable;
  authorizations_stream_versions: StreamVersionsTable;
}

declare module '../../database/database.js' {
  interface Database extends AuthorizationsReadTables {}
}
