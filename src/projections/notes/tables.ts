import type { ColumnType, Selectable } from 'kysely';
import type { NullableTimestamp, Timestamp } from '../../database/columns.js';
import type { NoteableType, NotePosition, NoteType } from '../../domain/notes/events.js';
import type { StreamVersionsTable } from '../stream-versions.js';

/** GitLab's `notes`: user notes, and the system notes copied onto a moved issue's new issue (other system notes are derived from the log when read). Ids are bigint: read as text. */
export interface NotesTable {
  id: ColumnType<string, number, never>;
  noteable_type: NoteableType;
  noteable_id: number | null;
  commit_id: string | null;
  project_id: number | null;
  group_id: number | null;
  author_id: number;
  body: string;
  type: NoteType | null;
  discussion_id: string;
  position: ColumnType<NotePosition | null, string | null, string | null>;
  line_code: string | null;
  /** A moved issue's system note copied onto the new issue (NoteCopied); every other row is a user note. */
  system: ColumnType<boolean, boolean | undefined, never>;
  resolvable: boolean;
  resolved_by_id: number | null;
  resolved_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Each noteable's count of user notes: the entities' `user_notes_count`. */
export interface NoteCountsTable {
  noteable_type: NoteableType;
  noteable_id: number;
  user_notes_count: number;
}

export interface NotesReadTables {
  notes: NotesTable;
  note_counts: NoteCountsTable;
  notes_stream_versions: StreamVersionsTable;
}

export type NoteRow = Selectable<NotesTable>;

declare module '../../database/database.js' {
  interface Database extends NotesReadTables {}
}
