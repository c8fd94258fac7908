import { arrayOf, dateTime, entity, int, nullable, ref, str, values } from './dsl.js';

const diffHead = {
  id: int,
  head_commit_sha: nullable(str),
  base_commit_sha: nullable(str),
  start_commit_sha: nullable(str),
  created_at: dateTime,
  merge_request_id: int,
  state: values('empty', 'collected', 'overflow'),
  real_size: nullable(str),
};

export const MergeRequestDiff = entity('Entities::MergeRequestDiff: a version.', diffHead);

export const MergeRequestDiffFull = entity('Entities::MergeRequestDiffFull: a version with its commits and diffs.', {
  ...diffHead,
  commits: arrayOf(ref('Commit')),
  diffs: arrayOf(ref('Diff')),
});
