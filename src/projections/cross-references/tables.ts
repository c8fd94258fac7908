import type { Selectable } from 'kysely';
import type { CrossReferenceAction, MentionedType, MentionerType } from '../../domain/notes/cross-references.js';
import type { StreamVersionsTable } from '../stream-versions.js';

/**
 * A mention of an issue or a merge request (the target) by another (the mentioner): an issue,
 * a merge request, or a commit (`mentioner_sha`), by the event `event_id`; or (`action`
 * `relate`, `unrelate`) an issue link made or removed between the target and the mentioner. `ordinal`: the k-th
 * note that event writes on the target (a push's commits), its note id 10·p + k.
 */
export interface CrossReferencesTable {
  event_id: string;
  target_type: MentionedType | 'Epic';
  target_id: number;
  ordinal: number;
  action: CrossReferenceAction;
  /** Null for an epic. */
  target_project_id: number | null;
  mentioner_type: MentionerType;
  mentioner_id: number | null;
  mentioner_sha: string | null;
  mentioner_project_id: number;
  /** An issue moved between epics: the epic at the move's other end. */
  other_epic_id: number | null;
  /**
   * A pushed commit's mention (`author_recorded`: its event recorded the authors, schema
   * version 4 of the branch events): the user whose email was the commit's author email at
   * push time, the note's author; null for none (the note is the pusher's). Not recorded
   * (older events, every other mention): null and false, and a pushed commit's author is
   * resolved when read.
   */
  author_id: number | null;
  author_recorded: boolean;
}

export interface CrossReferencesReadTables {
  cross_references: CrossReferencesTable;
  cross_references_stream_versions: StreamVersionsTable;
}

export type CrossReferenceRow = Selectable<CrossReferencesTable>;

declare module '../../database/database.js' {
  interface Database extends CrossReferencesReadTables {}
}
