import type { Config } from '../../config.js';
import type { NoteData } from '../../domain/feeds/activity.js';
import type { ActivityRow } from '../../projections/feeds/activity.js';
import { iso, toUserBasic } from './users.js';

/**
 * Entities::Event (GitLab 12) with the spec's `title` and `data` (always null): `note` only
 * for comments and `push_data` only for pushes, as GitLab exposes them.
 */
export function toEvent(row: ActivityRow, config: Config) {
  const { record } = row;
  const author = toUserBasic(row.author, config);
  return {
    title: null,
    project_id: row.project_id,
    action_name: record.action_name,
    target_id: record.target_id,
    target_iid: record.target_iid,
    target_type: record.target_type,
    author_id: row.author.id,
    target_title: record.target_title,
    created_at: iso(row.occurred_at),
    ...(record.note ? { note: toNote(record.note, author) } : {}),
    author,
    ...(record.push_data ? { push_data: record.push_data } : {}),
    author_username: row.author.username,
    data: null,
  };
}

/** Entities::Note as an event embeds it: a comment's author is the event's. */
function toNote(note: NoteData, author: unknown) {
  const { id, body, attachment, created_at, system, noteable_id, noteable_type, noteable_iid } = note;
  return { id, body, attachment, author, created_at, system, noteable_id, noteable_type, noteable_iid };
}
