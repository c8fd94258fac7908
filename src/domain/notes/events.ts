import { z } from 'zod';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';

/**
 * Notes (GitLab's `Note`, `DiscussionNote`, `DiffNote`): the comments users write on a
 * noteable — a merge request, a commit, an epic, and (wired by their areas) an issue or a
 * snippet. One aggregate per noteable, stream `notes-<noteable key>`, so that a discussion's
 * notes, its replies and its resolution are decided on one stream. System notes are not
 * here: they fall out of the noteable's own events (./system-notes.ts).
 */

/** The noteable types (GitLab's `noteable_type` values) notes may be on. */
export const NOTEABLE_TYPES = ['MergeRequest', 'Commit', 'Epic', 'Issue', 'Snippet'] as const;
export type NoteableType = (typeof NOTEABLE_TYPES)[number];

/** GitLab's note `type` column: null for a plain note (an individual discussion); LegacyDiffNote: a commit comment on a line (API::Commits). */
export const NOTE_TYPES = ['DiscussionNote', 'DiffNote', 'LegacyDiffNote'] as const;
export type NoteType = (typeof NOTE_TYPES)[number];

const sha = z.string().regex(/^[0-9a-f]{40}$/);
const discussionId = z.string().regex(/^[0-9a-f]{40}$/);

/** Where a note is: its noteable (a commit has no id, its SHA instead) and the project or group holding it. */
const noteable = {
  noteable_type: z.enum(NOTEABLE_TYPES),
  noteable_id: z.int().nullable(),
  commit_id: sha.nullable(),
  project_id: z.int().nullable(),
  group_id: z.int().nullable(),
};
export type NoteableData = { [K in keyof typeof noteable]: z.infer<(typeof noteable)[K]> };

/** A diff note's position (Gitlab::Diff::Position#to_h), as it was given and validated. */
export const positionSchema = z.strictObject({
  base_sha: sha,
  start_sha: sha,
  head_sha: sha,
  old_path: z.string().nullable(),
  new_path: z.string().nullable(),
  position_type: z.enum(['text', 'image']),
  old_line: z.int().nullable().optional(),
  new_line: z.int().nullable().optional(),
  width: z.int().nullable().optional(),
  height: z.int().nullable().optional(),
  x: z.int().nullable().optional(),
  y: z.int().nullable().optional(),
});
export type NotePosition = z.infer<typeof positionSchema>;

const ofNote = { id: z.int(), ...noteable };

export const noteEvents = {
  NoteAdded: z.strictObject({
    ...ofNote,
    author_id: z.int(),
    body: z.string(),
    type: z.enum(NOTE_TYPES).nullable(),
    discussion_id: discussionId,
    position: positionSchema.nullable(),
    /** Diff notes: GitLab's `line_code` of the position (sha1(path)_old_new). */
    line_code: z.string().nullable(),
    /** The noteable's iid (merge requests, issues), for the activity feed's `note`. */
    noteable_iid: z.int().nullable(),
    /** The noteable's title as it was (a commit's message), for the chat notification (ChatMessage::NoteMessage). */
    noteable_title: z.string(),
    /** When it was written: the command's time, or the `created_at` an administrator or owner gave. */
    created_at: z.string(),
    /** A reply to a resolved discussion is resolved by its author (Notes::BuildService#should_resolve). */
    resolved: z.boolean(),
  }),
  /** A reply to an individual note makes it the first note of a discussion (Discussion#convert_to_discussion!). */
  NoteConvertedToDiscussion: z.strictObject(ofNote),
  NoteEdited: z.strictObject({ ...ofNote, body: z.string() }),
  NoteDeleted: z.strictObject(ofNote),
  /** Resolvable notes of a discussion (or one of them) resolved by a user. */
  NotesResolved: z.strictObject({ ...noteable, discussion_id: discussionId, note_ids: z.array(z.int()), by_id: z.int() }),
  NotesUnresolved: z.strictObject({ ...noteable, discussion_id: discussionId, note_ids: z.array(z.int()) }),
  /**
   * A note of a moved issue, user or system note, copied onto the new issue (Issues::MoveService,
   * Issuable::Clone::ContentRewriter#rewrite_notes): its author, type, times, its body with
   * the references rewritten, the discussion it is in mapped to one of the new issue's. No
   * todo, activity, hook or mention follows a copy (docs/issues.md#moving-an-issue).
   */
  NoteCopied: z.strictObject({
    ...ofNote,
    copied_from_id: z.int(),
    author_id: z.int(),
    body: z.string(),
    system: z.boolean(),
    type: z.enum(NOTE_TYPES).nullable(),
    discussion_id: discussionId,
    created_at: z.string(),
    updated_at: z.string(),
  }),
} satisfies EventSchemas;

export type NoteEvent = EventOf<typeof noteEvents>;
export type NoteEventOf<T extends NoteEvent['type']> = Extract<NoteEvent, { type: T }>;

/** The stream key of a noteable's notes: `merge_request-7`, `epic-3`, `commit-12-<sha>`. */
export function noteableKey(ref: Pick<NoteableData, 'noteable_type' | 'noteable_id' | 'commit_id' | 'project_id'>): string {
  const kind = ref.noteable_type.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
  return ref.noteable_type === 'Commit' ? `${kind}-${ref.project_id}-${ref.commit_id}` : `${kind}-${ref.noteable_id}`;
}

export const notesStreamId = (key: string) => `notes-${key}`;

/** A note's activity is the project's (or the group's), its target the note. */
export const noteEventIndex = (event: NoteEvent): FeedIndex => ({
  projectId: event.data.project_id,
  groupId: event.data.group_id,
  targetType: 'Note',
  targetId: 'id' in event.data ? event.data.id : null,
});

/** GitLab's Note#resolvable?: a discussion or diff note on a merge request (system notes and legacy diff notes never). */
export const isResolvable = (type: NoteType | null, noteableType: NoteableType) => type !== null && type !== 'LegacyDiffNote' && noteableType === 'MergeRequest';
