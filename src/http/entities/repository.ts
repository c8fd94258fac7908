import { createHash } from 'node:crypto';
import type { TreeEntry } from '../../domain/repository/objects.js';
import { formatTz, MODES } from '../../domain/repository/objects.js';
import type { CommitView } from '../../projections/repository/queries.js';
import type { RepositoryTagRow } from '../../projections/repository/tables.js';

/** GitLab's repository entities (12.x): Commit, CommitDetail, CommitStats, Branch, Tag, TagRelease, TreeObject, the file of the Files API. */

/** A git time in its own zone, as GitLab writes it: `2012-09-20T09:06:12.000+03:00`. */
export function gitTime(seconds: number, tzOffset: number): string {
  const local = new Date((seconds + tzOffset * 60) * 1000).toISOString().slice(0, 19);
  const tz = formatTz(tzOffset);
  return `${local}.000${tz.slice(0, 3)}:${tz.slice(3)}`;
}

/** Commit#full_title: the message's first line. */
const titleOf = (message: string) => message.split('\n', 1)[0] ?? '';

export const toCommit = (commit: CommitView, projectWebUrl: string, parentIds: readonly string[] = commit.parents) => {
  const { author, committer } = commit;
  const committed = gitTime(committer.time, committer.tzOffset);
  // Most commits are authored when they are committed: one time to write, not three.
  const authored = author.time === committer.time && author.tzOffset === committer.tzOffset ? committed : gitTime(author.time, author.tzOffset);
  return {
    id: commit.sha,
    short_id: commit.sha.slice(0, 8),
    created_at: committed,
    parent_ids: [...parentIds],
    title: titleOf(commit.message),
    message: commit.message,
    author_name: author.name,
    author_email: author.email,
    authored_date: authored,
    committer_name: committer.name,
    committer_email: committer.email,
    committed_date: committed,
    web_url: `${projectWebUrl}/-/commit/${commit.sha}`,
  };
};

/** Entities::BlameRange (GitLab 13's blame API): the commit as Entities::BlameRangeCommit, and its lines. */
export const toBlameRange = (range: { readonly commit: CommitView; readonly lines: readonly string[] }) => ({
  commit: {
    id: range.commit.sha,
    parent_ids: [...range.commit.parents],
    message: range.commit.message,
    authored_date: gitTime(range.commit.author.time, range.commit.author.tzOffset),
    author_name: range.commit.author.name,
    author_email: range.commit.author.email,
    committed_date: gitTime(range.commit.committer.time, range.commit.committer.tzOffset),
    committer_name: range.commit.committer.name,
    committer_email: range.commit.committer.email,
  },
  lines: [...range.lines],
});

export interface CommitStats {
  readonly additions: number;
  readonly deletions: number;
}

/** Entities::CommitDetail: the commit, its stats (unless `stats=false`), status, project and last pipeline (forgelog runs none). */
export const toCommitDetail = (commit: CommitView, projectWebUrl: string, projectId: number, stats: CommitStats | null) => ({
  ...toCommit(commit, projectWebUrl),
  ...(stats ? { stats: { additions: stats.additions, deletions: stats.deletions, total: stats.additions + stats.deletions } } : {}),
  status: null,
  project_id: projectId,
  last_pipeline: null,
});

export interface BranchFacts {
  readonly merged: boolean;
  readonly protected: boolean;
  readonly developersCanPush: boolean;
  readonly developersCanMerge: boolean;
  readonly canPush: boolean;
  readonly default: boolean;
}

export const toBranch = (name: string, commit: CommitView, projectWebUrl: string, facts: BranchFacts) => ({
  name,
  commit: toCommit(commit, projectWebUrl),
  merged: facts.merged,
  protected: facts.protected,
  developers_can_push: facts.developersCanPush,
  developers_can_merge: facts.developersCanMerge,
  can_push: facts.canPush,
  default: facts.default,
  web_url: `${projectWebUrl}/-/tree/${name}`,
});

/** Entities::TreeObject: a tree's mode with its leading zero, as GitLab shows it. */
export const toTreeObject = (entry: TreeEntry, path: string) => ({
  id: entry.sha,
  name: entry.name,
  type: entry.mode === MODES.tree ? 'tree' : 'blob',
  path,
  mode: entry.mode === MODES.tree ? '040000' : entry.mode,
});

/** GET /projects/:id/repository/files/:file_path (API::Files#blob_data). */
export const toFile = (input: { path: string; ref: string; blobId: string; commitId: string; lastCommitId: string; content: Uint8Array }) => ({
  file_name: input.path.split('/').at(-1) ?? input.path,
  file_path: input.path,
  size: input.content.length,
  encoding: 'base64',
  content_sha256: createHash('sha256').update(input.content).digest('hex'),
  ref: input.ref,
  blob_id: input.blobId,
  commit_id: input.commitId,
  last_commit_id: input.lastCommitId,
  content: Buffer.from(input.content).toString('base64'),
});

/** Entities::TagRelease (a tag's release notes). */
export const toTagRelease = (tag: string, description: string) => ({ tag_name: tag, description });

/** Entities::Tag (GitLab 12): name, message (null for a lightweight tag), target, the commit, its release, whether a protected tag matches. */
export const toTag = (tag: RepositoryTagRow, commit: CommitView, projectWebUrl: string, isProtected: boolean) => ({
  name: tag.name,
  message: tag.message,
  target: tag.target,
  commit: toCommit(commit, projectWebUrl),
  release: tag.release_description === null ? null : toTagRelease(tag.name, tag.release_description),
  protected: isProtected,
});
