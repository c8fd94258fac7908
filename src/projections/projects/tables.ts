import type { ColumnType, Selectable } from 'kysely';
import type { Visibility } from '../../domain/access.js';
import type { ProjectSettings } from '../../domain/projects/settings.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** Projects; `traversal_ids` are the namespace's (root → the project's namespace). */
export interface ProjectsTable {
  id: number;
  namespace_id: number;
  creator_id: number | null;
  name: string;
  path: string;
  name_with_namespace: string;
  path_with_namespace: string;
  description: string | null;
  default_branch: string | null;
  visibility: Visibility;
  archived: boolean;
  tag_list: string[];
  issues_enabled: boolean;
  merge_requests_enabled: boolean;
  wiki_enabled: boolean;
  jobs_enabled: boolean;
  snippets_enabled: boolean;
  container_registry_enabled: boolean;
  shared_runners_enabled: boolean;
  lfs_enabled: boolean;
  public_jobs: boolean;
  request_access_enabled: boolean;
  star_count: number;
  forks_count: number;
  open_issues_count: number;
  avatar_url: string | null;
  traversal_ids: number[];
  /** GitLab's long tail of project settings, named as in its JSON (see ProjectSettingsColumn). */
  settings: ColumnType<ProjectSettingsColumn, string, string>;
  pending_delete: boolean;
  created_at: Timestamp;
  last_activity_at: Timestamp;
  updated_at: Timestamp;
  stream_version: number;
  /** The upload `avatar_url` serves: its SHA-256 in `uploads` (migration 0051). Never shown by the API. */
  avatar_sha256: string | null;
  /** The project it is a fork of (migration 0065); `forks_count` counts the rows naming a project here. */
  forked_from_project_id: number | null;
}

/** What `projects.settings` holds: the settings without a column of their own, and the README flag. */
export type ProjectSettingsColumn = Omit<ProjectSettings, (typeof COLUMN_SETTINGS)[number]> & { readonly readme: boolean };

export interface ProjectStarsTable {
  project_id: number;
  user_id: number;
  created_at: Timestamp;
}

/** Projects shared with groups (`shared_with_groups`, a group's `shared_projects`). */
export interface ProjectGroupLinksTable {
  /** The link's own id (migration 0052), from its creation event. */
  id: number;
  project_id: number;
  group_id: number;
  group_access: number;
  expires_at: string | null;
  created_at: Timestamp;
}

/** Each namespace's projects not pending deletion (the personal project limit's count), kept by the projector. */
export interface NamespaceProjectCountsTable {
  namespace_id: number;
  projects: number;
}

export interface ProjectsReadTables {
  projects: ProjectsTable;
  namespace_project_counts: NamespaceProjectCountsTable;
  project_stars: ProjectStarsTable;
  project_group_links: ProjectGroupLinksTable;
  projects_stream_versions: StreamVersionsTable;
}

export type ProjectRow = Selectable<ProjectsTable>;

/** Settings stored in columns of their own (the rest go to `settings`). */
export const COLUMN_SETTINGS = [
  'name', 'path', 'description', 'visibility', 'tag_list', 'container_registry_enabled', 'shared_runners_enabled', 'lfs_enabled',
  'public_jobs', 'request_access_enabled',
] as const;

declare module '../../database/database.js' {
  interface Database extends ProjectsReadTables {}
}
