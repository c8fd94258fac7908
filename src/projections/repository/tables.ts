import type { ColumnType, Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


/** A project's branches and their heads (the repository projection). */
export interface RepositoryBranchesTable {
  project_id: number;
  name: string;
  sha: string;
  updated_at: Timestamp;
}

/** A project's tags (the repository projection), with the release the tags API gave each. */
export interface RepositoryTagsTable {
  project_id: number;
  name: string;
  /** An annotated tag's object, or (lightweight) the commit. */
  target: string;
  commit_sha: string;
  /** An annotated tag's message; null for a lightweight tag. */
  message: string | null;
  release_description: string | null;
  created_at: Timestamp;
}

/**
 * Git objects, content-addressed per project, append-only: written by the repository
 * commands in their own transaction (src/commands/repository.ts), never by a projection, so
 * a rebuild leaves them alone.
 */
export interface RepositoryObjectsTable {
  project_id: number;
  sha: string;
  type: 'blob' | 'tree' | 'commit' | 'tag';
  size: number;
  content: Uint8Array;
}

/**
 * The commit graph index (git's commit-graph file), a row per stored commit: written with the
 * commit by storeObjects (src/commands/repository.ts), append-only, not a projection (a
 * rebuild leaves it alone). Read by src/projections/repository/commit-graph.ts.
 */
export interface RepositoryCommitsTable {
  project_id: number;
  sha: string;
  parents: string[];
  /** git's topological level: 1 for a root, else 1 + the greatest of the parents'. */
  generation: number;
  /** Seconds since the epoch (int8: read back as a string by node-postgres). */
  committer_time: ColumnType<string | number, number, never>;
  /** The commits it reaches, itself included (`git rev-list --count`). */
  ancestors: number;
  /** Its first-parent chain's length, itself included (`git rev-list --count --first-parent`; migration 0076). */
  first_parent_depth: number;
}

/**
 * The per-path change index, a row per path a stored commit changes against its first
 * parent (files and the directories above them): written with the commit by indexCommits,
 * append-only, not a projection (src/projections/repository/path-changes.ts). Read by
 * queries.ts (`lastCommitFor`, `pathLog`).
 */
export interface RepositoryPathChangesTable {
  project_id: number;
  path: string;
  /** SHA-256 of the path's UTF-8 (pathKey): the key, since a path may outgrow a btree entry. */
  path_key: Uint8Array;
  commit_sha: string;
  /** The SHA of the path's entry after the commit; null where the commit removed it. */
  entry: string | null;
  /** Null: the path differs from every parent (`git log -- path` shows the commit); else the 1-based index of the first parent it is the same as (git's history simplification follows only that one). */
  follow: number | null;
}

/**
 * Each stored commit's `stats` against its first parent (lines added and removed,
 * src/domain/repository/commit-stats.ts): written with the commit by indexCommits,
 * append-only, not a projection (src/projections/repository/path-changes.ts). Read by
 * queries.ts (`commitStats`).
 */
export interface RepositoryCommitStatsTable {
  project_id: number;
  commit_sha: string;
  additions: number;
  deletions: number;
}

export interface RepositoryReadTables {
  repository_branches: RepositoryBranchesTable;
  repository_tags: RepositoryTagsTable;
  repository_objects: RepositoryObjectsTable;
  repository_commits: RepositoryCommitsTable;
  repository_path_changes: RepositoryPathChangesTable;
  repository_commit_stats: RepositoryCommitStatsTable;
  repository_stream_versions: StreamVersionsTable;
}

export type RepositoryBranchRow = Selectable<RepositoryBranchesTable>;
export type RepositoryTagRow = Selectable<RepositoryTagsTable>;

declare module '../../database/database.js' {
  interface Database extends RepositoryReadTables {}
}
