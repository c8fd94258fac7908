import type { NoteableType, NotePosition, NoteType } from '../notes/events.js';
import { issueHookAttrs, issueUrl, type IssueFacts } from './payloads-issues.js';
import { lastCommitAttrs, mergeRequestHookAttrs, mergeRequestUrl, type MergeRequestFacts } from './payloads-merge-requests.js';
import { absoluteImageUrls, projectHookAttrs, sidekiqTime, userHookAttrs, type CommitFacts, type ProjectFacts, type UserFacts } from './payloads.js';

/**
 * The "Note Hook" (GitLab 12.10's Notes::PostProcessService#execute_note_hooks over
 * Gitlab::DataBuilder::Note and Gitlab::HookData::NoteBuilder): a user note's attributes and
 * its noteable's hook attributes under `merge_request`, `issue`, `commit` or `snippet`. Sent under
 * `note_hooks`, or `confidential_note_hooks` when the noteable is a confidential issue
 * (Note#confidential?).
 */

export interface NoteFacts {
  readonly id: number;
  readonly authorId: number;
  readonly body: string;
  readonly type: NoteType | null;
  readonly noteableType: NoteableType;
  readonly noteableId: number | null;
  readonly commitId: string | null;
  readonly discussionId: string;
  readonly lineCode: string | null;
  readonly position: NotePosition | null;
  readonly projectId: number;
  readonly resolvedAt: Date | null;
  readonly resolvedById: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** A LegacyDiffNote's `st_diff`; null for every other note. */
  readonly stDiff?: LegacyDiffFacts | null;
}

/**
 * LegacyDiffNote's `st_diff` (Gitlab::Git::Diff#to_hash, SERIALIZE_KEYS in their order): the
 * file of the commit's diff the note's line code names, as GitLab serialized it when the note
 * was created (LegacyDiffNote#set_diff).
 */
export interface LegacyDiffFacts {
  readonly diff: string;
  readonly new_path: string;
  readonly old_path: string;
  readonly a_mode: string;
  readonly b_mode: string;
  readonly new_file: boolean;
  readonly renamed_file: boolean;
  readonly deleted_file: boolean;
  readonly too_large: boolean;
}

/** The noteable as its hook attributes are built: one of these. */
export type NoteableFacts =
  | { readonly kind: 'merge_request'; readonly mergeRequest: MergeRequestFacts }
  | { readonly kind: 'issue'; readonly issue: IssueFacts }
  | { readonly kind: 'commit'; readonly commit: CommitFacts }
  | { readonly kind: 'snippet'; readonly snippet: SnippetFacts };

export interface SnippetFacts {
  readonly id: number;
  readonly title: string;
  readonly content: string;
  readonly authorId: number;
  readonly projectId: number;
  readonly fileName: string;
  readonly visibilityLevel: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Snippet#hook_attrs (its attributes), as the 12.10 webhook documentation shows them. */
const snippetHookAttrs = (s: SnippetFacts) => ({
  id: s.id,
  title: s.title,
  content: s.content,
  author_id: s.authorId,
  project_id: s.projectId,
  created_at: sidekiqTime(s.createdAt),
  updated_at: sidekiqTime(s.updatedAt),
  file_name: s.fileName,
  expires_at: null,
  type: 'ProjectSnippet',
  visibility_level: s.visibilityLevel,
});

/** Gitlab::UrlBuilder's note URL: the noteable's page, anchored at the note. */
function noteUrl(note: NoteFacts, project: ProjectFacts, noteable: NoteableFacts): string {
  const anchor = `#note_${note.id}`;
  switch (noteable.kind) {
    case 'merge_request':
      return `${mergeRequestUrl(noteable.mergeRequest)}${anchor}`;
    case 'issue':
      return `${issueUrl(noteable.issue)}${anchor}`;
    case 'commit':
      return `${project.webUrl}/-/commit/${noteable.commit.id}${anchor}`;
    case 'snippet':
      return `${project.webUrl}/-/snippets/${noteable.snippet.id}${anchor}`;
  }
}

/** Note#hook_attrs (NoteBuilder's SAFE_HOOK_ATTRIBUTES in their order, then `description` and `url`). */
function noteHookAttrs(note: NoteFacts, url: string, instanceUrl: string) {
  return {
    attachment: null,
    author_id: note.authorId,
    change_position: null,
    commit_id: note.commitId,
    created_at: sidekiqTime(note.createdAt),
    discussion_id: note.discussionId,
    id: note.id,
    line_code: note.lineCode,
    note: note.body,
    noteable_id: note.noteableId,
    noteable_type: note.noteableType,
    original_position: note.position,
    position: note.position,
    project_id: note.projectId,
    resolved_at: sidekiqTime(note.resolvedAt),
    resolved_by_id: note.resolvedById,
    resolved_by_push: null,
    st_diff: note.stDiff ?? null,
    system: false,
    type: note.type,
    updated_at: sidekiqTime(note.updatedAt),
    updated_by_id: null,
    description: absoluteImageUrls(note.body, instanceUrl),
    url,
  };
}

/** Gitlab::DataBuilder::Note.build(note, note.author). */
export function noteData(note: NoteFacts, author: UserFacts, project: ProjectFacts, noteable: NoteableFacts) {
  const base = {
    object_kind: 'note',
    user: userHookAttrs(author),
    project_id: project.id,
    project: projectHookAttrs(project),
    object_attributes: noteHookAttrs(note, noteUrl(note, project, noteable), project.instanceUrl),
    repository: { name: project.name, url: project.sshUrl, description: project.description, homepage: project.webUrl },
  };
  switch (noteable.kind) {
    case 'merge_request':
      return { ...base, merge_request: mergeRequestHookAttrs(noteable.mergeRequest) };
    case 'issue':
      return { ...base, issue: issueHookAttrs(noteable.issue) };
    case 'commit':
      return { ...base, commit: lastCommitAttrs(noteable.commit, project.webUrl) };
    case 'snippet':
      return { ...base, snippet: snippetHookAttrs(noteable.snippet) };
  }
}
