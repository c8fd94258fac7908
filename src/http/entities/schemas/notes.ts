import { arrayOf, bool, dateTime, entity, int, nullable, object, ref, str, values } from './dsl.js';

const user = nullable(ref('UserBasic'));

/** A diff note's position: a line of text, or a place on an image. */
const position = object({
  base_sha: nullable(str),
  start_sha: nullable(str),
  head_sha: nullable(str),
  old_path: nullable(str),
  new_path: nullable(str),
  position_type: values('text', 'image'),
  old_line: nullable(int),
  new_line: nullable(int),
  width: nullable(int),
  height: nullable(int),
  x: nullable(int),
  y: nullable(int),
}, ['old_line', 'new_line', 'width', 'height', 'x', 'y']);

export const Note = entity('Entities::Note (`position` on a diff note; `resolved`, `resolved_by` when resolvable).', {
  id: int,
  type: nullable(values('DiscussionNote', 'DiffNote', 'LegacyDiffNote')),
  body: str,
  attachment: { type: 'null' },
  author: user,
  created_at: dateTime,
  updated_at: dateTime,
  system: bool,
  noteable_id: nullable(int),
  noteable_type: str,
  position,
  resolvable: bool,
  resolved: bool,
  resolved_by: user,
  noteable_iid: nullable(int),
}, ['position', 'resolved', 'resolved_by']);

export const Discussion = entity('Entities::Discussion.', { id: str, individual_note: bool, notes: arrayOf(ref('Note')) });

export const CommitNote = entity('Entities::CommitNote.', {
  note: str,
  path: nullable(str),
  line: nullable(int),
  line_type: nullable(str),
  author: user,
  created_at: dateTime,
});
