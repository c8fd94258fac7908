import { arrayOf, bool, entity, nullable, ref, str } from './dsl.js';

export const Diff = entity('Entities::Diff.', {
  old_path: str,
  new_path: str,
  a_mode: str,
  b_mode: str,
  new_file: bool,
  renamed_file: bool,
  deleted_file: bool,
  diff: str,
});

export const Compare = entity('Entities::Compare.', {
  commit: nullable(ref('Commit')),
  commits: arrayOf(ref('Commit')),
  diffs: arrayOf(ref('Diff')),
  compare_timeout: bool,
  compare_same_ref: nullable(bool),
});
