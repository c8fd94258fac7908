import { arrayOf, bool, entity, extend, int, nullable, object, ref, str, values } from './dsl.js';

/** A git time as GitLab writes it: the committer's own offset (`2020-01-01T10:00:00.000+02:00`). */
const gitTime = { type: 'string', format: 'date-time' } as const;

export const Commit = entity('Entities::Commit.', {
  id: str,
  short_id: str,
  created_at: gitTime,
  parent_ids: arrayOf(str),
  title: str,
  message: str,
  author_name: str,
  author_email: str,
  authored_date: gitTime,
  committer_name: str,
  committer_email: str,
  committed_date: gitTime,
  web_url: str,
});

export const CommitWithStats = extend(Commit, 'Entities::Commit in the list, Entities::CommitWithStats with `with_stats=true` (its `stats`).', {
  stats: object({ additions: int, deletions: int, total: int }),
}, ['stats']);

export const CommitDetail = extend(Commit, 'Entities::CommitDetail (`stats` unless `stats=false`).', {
  stats: object({ additions: int, deletions: int, total: int }),
  status: { type: 'null' },
  project_id: int,
  last_pipeline: { type: 'null' },
}, ['stats']);

export const Branch = entity('Entities::Branch.', {
  name: str,
  commit: ref('Commit'),
  merged: bool,
  protected: bool,
  developers_can_push: bool,
  developers_can_merge: bool,
  can_push: bool,
  default: bool,
  web_url: str,
});

export const BlameRange = entity("Entities::BlameRange (GitLab 13's blame API): the commit as Entities::BlameRangeCommit, and its lines.", {
  commit: object({
    id: str,
    parent_ids: arrayOf(str),
    message: str,
    authored_date: gitTime,
    author_name: str,
    author_email: str,
    committed_date: gitTime,
    committer_name: str,
    committer_email: str,
  }),
  lines: arrayOf(str),
});

export const TreeObject = entity('Entities::TreeObject.', { id: str, name: str, type: values('tree', 'blob'), path: str, mode: str });

export const File = entity('A file of the repository (API::Files), its content in base64.', {
  file_name: str,
  file_path: str,
  size: int,
  encoding: values('base64'),
  content_sha256: str,
  ref: str,
  blob_id: str,
  commit_id: str,
  last_commit_id: str,
  content: str,
});

export const Tag = entity('Entities::Tag.', {
  name: str,
  message: nullable(str),
  target: str,
  commit: ref('Commit'),
  release: nullable(object({ tag_name: str, description: str })),
  protected: bool,
});

export const Contributor = entity('Entities::Contributor.', { name: str, email: str, commits: int, additions: int, deletions: int });

export const BasicRef = entity('Entities::BasicRef: a branch or tag holding a commit.', { type: values('branch', 'tag'), name: str });
