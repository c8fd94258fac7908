import { walkIssuable, type IssuableBefore, type LoggedIssuableEvent, type WalkedRecord } from '../issuable-history.js';
import { isWorkInProgress, wiplessTitle } from '../issuable-text.js';
import type { MergeRequestEvent } from '../merge-requests/events.js';
import { formatTimeTracking } from '../time-tracking.js';

/**
 * System notes fall out of the log: GitLab 12 writes a note for every change of a merge
 * request (SystemNoteService, SystemNotes::IssuablesService / CommitService /
 * TimeTrackingService); here they are this pure mapping from the merge request's events, in
 * GitLab 12's wording, and nothing is written. The k-th note of the event at log position p
 * has the id 10·p + k (the walk of src/domain/issuable-history.ts, shared with the issue's
 * notes and the resource events), so ids are stable across a rebuild and a replay.
 *
 * Facts the events name by id (usernames, milestones, commit titles) are looked up by the
 * caller when it reads (`SystemNoteFacts`): a renamed user shows under the new name, where
 * GitLab keeps the text it wrote.
 */

/** System notes' ids: 10·position + k. */
export const SYSTEM_NOTE_ID_FACTOR = 10;

export interface SystemNoteFacts {
  username(id: number): string;
  /** Milestone#to_reference as SystemNotes::IssuablesService#change_milestone asks it: `%3` in its project, `%"Title"` a group's. */
  milestoneReference(id: number): string;
  /** The commit's title (its message's first line), for "added N commits". */
  commitTitle(sha: string): string;
  /** The merge request's path, for the "Compare with previous version" link. */
  readonly mergeRequestPath: string;
}

export interface SystemNote {
  readonly id: number;
  readonly position: string;
  readonly createdAt: string;
  readonly authorId: number;
  readonly body: string;
}

/** Rails' Array#to_sentence: "a", "a and b", "a, b, and c". */
export function toSentence(words: readonly string[]): string {
  if (words.length <= 2) return words.join(' and ');
  return `${words.slice(0, -1).join(', ')}, and ${words.at(-1)}`;
}

const pluralize = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/**
 * Gitlab::Diff::CharDiff and InlineDiffMarkdownMarker: the characters of the two titles outside
 * their longest common subsequence, each run of them marked `{-old-}` and `{+new+}`.
 */
export function markTitleChange(before: string, after: string): [string, string] {
  const a = Array.from(before);
  const b = Array.from(after);
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..] (titles are at most 255 characters).
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const keptA = new Array<boolean>(a.length).fill(false);
  const keptB = new Array<boolean>(b.length).fill(false);
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) {
      keptA[i++] = true;
      keptB[j++] = true;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) i += 1;
    else j += 1;
  }
  const mark = (chars: readonly string[], kept: readonly boolean[], open: string, close: string) =>
    chars.map((ch, k) => `${!kept[k] && (k === 0 || kept[k - 1]) ? open : ''}${ch}${!kept[k] && (k === chars.length - 1 || kept[k + 1]) ? close : ''}`).join('');
  return [mark(a, keptA, '{-', '-}'), mark(b, keptB, '{+', '+}')];
}

/** SystemNotes::IssuablesService#change_label. */
export function labelsNote(before: readonly number[], after: readonly number[]): string | null {
  const added = after.filter((id) => !before.includes(id)).sort((x, y) => x - y);
  const removed = before.filter((id) => !after.includes(id)).sort((x, y) => x - y);
  if (added.length === 0 && removed.length === 0) return null;
  const parts: string[] = [];
  if (added.length > 0) parts.push(`added ${added.map((id) => `~${id}`).join(' ')}`);
  if (removed.length > 0) parts.push(`removed ${removed.map((id) => `~${id}`).join(' ')}`);
  return `${parts.join(' and ')} ${added.length + removed.length === 1 ? 'label' : 'labels'}`;
}

/** SystemNotes::IssuablesService#change_issuable_assignees. */
export function assigneesNote(before: readonly number[], after: readonly number[], facts: Pick<SystemNoteFacts, 'username'>): string | null {
  const added = after.filter((id) => !before.includes(id));
  const removed = before.filter((id) => !after.includes(id));
  const parts: string[] = [];
  if (added.length > 0) parts.push(`assigned to ${toSentence(added.map((id) => `@${facts.username(id)}`))}`);
  if (removed.length > 0) parts.push(`unassigned ${toSentence(removed.map((id) => `@${facts.username(id)}`))}`);
  return parts.length > 0 ? parts.join(' and ') : null;
}

/** SystemNotes::TimeTrackingService#change_time_estimate and #change_time_spent. */
export const timeEstimateNote = (estimate: number) => (estimate === 0 ? 'removed time estimate' : `changed time estimate to ${formatTimeTracking(estimate)}`);
export const timeSpentNote = (spent: number, reset: boolean) => (reset ? 'removed time spent' : `${spent > 0 ? 'added' : 'subtracted'} ${formatTimeTracking(Math.abs(spent))} of time spent`);

/** Escapes what ActionView's content_tag escapes. */
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** The notes one merge request event writes, in GitLab's order, given the merge request before it. */
function notesOf(logged: LoggedIssuableEvent<MergeRequestEvent>, before: IssuableBefore | null, facts: SystemNoteFacts): string[] {
  const { event } = logged;
  switch (event.type) {
    case 'MergeRequestOpened': {
      // IssuableBaseService#create runs Issuable::CommonSystemNotesService with is_update: false.
      const d = event.data;
      return [d.milestone_id !== null ? `changed milestone to ${facts.milestoneReference(d.milestone_id)}` : null, labelsNote([], d.label_ids)].filter((n): n is string => n !== null);
    }
    case 'MergeRequestUpdated': {
      if (!before) return [];
      const { changes } = event.data;
      const notes: string[] = [];
      // Issuable::CommonSystemNotesService#execute, then MergeRequests::UpdateService#handle_changes.
      if (changes.title !== undefined && changes.title !== before.title) {
        const old = before.title;
        if (isWorkInProgress(old) !== isWorkInProgress(changes.title)) notes.push(`${isWorkInProgress(changes.title) ? 'marked' : 'unmarked'} as a **Work In Progress**`);
        if (wiplessTitle(old) !== wiplessTitle(changes.title)) {
          const [from, to] = markTitleChange(old, changes.title);
          notes.push(`changed title from **${from}** to **${to}**`);
        }
      }
      if (changes.description !== undefined) notes.push('changed the description');
      if (changes.discussion_locked !== undefined) notes.push(`${changes.discussion_locked ? 'locked' : 'unlocked'} this merge request`);
      if (changes.milestone_id !== undefined && changes.milestone_id !== before.milestoneId) {
        notes.push(changes.milestone_id === null ? 'removed milestone' : `changed milestone to ${facts.milestoneReference(changes.milestone_id)}`);
      }
      if (changes.label_ids !== undefined) {
        const note = labelsNote(before.labelIds, changes.label_ids);
        if (note) notes.push(note);
      }
      if (changes.target_branch !== undefined) notes.push(`changed target branch from \`${before.targetBranch}\` to \`${changes.target_branch}\``);
      if (changes.assignee_ids !== undefined) {
        const note = assigneesNote(event.data.previous.assignee_ids ?? [], changes.assignee_ids, facts);
        if (note) notes.push(note);
      }
      return notes;
    }
    case 'MergeRequestClosed':
      return ['closed'];
    case 'MergeRequestReopened':
      return ['reopened'];
    case 'MergeRequestMerged':
      return ['merged'];
    case 'MergeRequestVersionRecorded': {
      // A version taken for a new target branch is no push: no commits note.
      if (!before || before.targetChanged) return [];
      const known = new Set(before.commitShas);
      const added = event.data.version.commit_shas.filter((sha) => !known.has(sha));
      if (added.length === 0) return [];
      // SystemNotes::CommitService#add_commits, with MergeRequests::RefreshService's new commits (newest first).
      const list = `<ul>${added.map((sha) => `<li>${sha.slice(0, 8)} - ${escapeHtml(facts.commitTitle(sha))}</li>`).join('')}</ul>`;
      const compare = `[Compare with previous version](${facts.mergeRequestPath}/diffs?diff_id=${event.data.version.version_id}&start_sha=${before.headSha})`;
      return [[`added ${pluralize(added.length, 'commit')}`, list, compare].join('\n\n')];
    }
    case 'MergeRequestTimeEstimateChanged':
      return [timeEstimateNote(event.data.time_estimate)];
    case 'MergeRequestTimeSpent':
      return [timeSpentNote(event.data.time_spent, event.data.reset)];
    case 'MergeRequestDeleted':
    case 'MergeRequestMergeStatusChecked':
    case 'MergeRequestSubscribed':
    case 'MergeRequestUnsubscribed':
      return [];
    default:
      return [];
  }
}

/** The merge request events that may write a system note. */
export const SYSTEM_NOTE_EVENT_TYPES = [
  'MergeRequestOpened',
  'MergeRequestUpdated',
  'MergeRequestClosed',
  'MergeRequestReopened',
  'MergeRequestMerged',
  'MergeRequestVersionRecorded',
  'MergeRequestTimeEstimateChanged',
  'MergeRequestTimeSpent',
] as const satisfies readonly MergeRequestEvent['type'][];

/**
 * The system notes of a merge request, from its stream's events in order (those of
 * SYSTEM_NOTE_EVENT_TYPES suffice), oldest first.
 */
export function mergeRequestSystemNotes(stream: readonly LoggedIssuableEvent<MergeRequestEvent>[], facts: SystemNoteFacts): SystemNote[] {
  return walkIssuable(stream, SYSTEM_NOTE_ID_FACTOR, (logged, before) => notesOf(logged, before, facts)).map(toSystemNote);
}

/** A walked note as a system note. */
export const toSystemNote = (n: WalkedRecord<string>): SystemNote => ({
  id: n.id,
  position: n.position,
  createdAt: n.createdAt,
  authorId: n.authorId,
  body: n.record,
});
