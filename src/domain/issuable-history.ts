import type { IssueEvent } from './issues/events.js';
import type { MergeRequestEvent } from './merge-requests/events.js';

/**
 * The one walk over an issue's or merge request's stream that the records derived from it
 * share: system notes (./notes/system-notes.ts, ./notes/issue-system-notes.ts) and resource
 * events (./resource-events.ts). GitLab writes those rows as the issuable changes; here they
 * fall out of its events when read, and nothing is written.
 *
 * The walk folds what each event is compared against (the issuable as it was before it),
 * names who did it, and numbers each event's records: the k-th record of the event at log
 * position p has the id `factor`·p + k, so an id survives a rebuild and a replay. The factor
 * is each kind's own and part of the ids answered: 10 for system notes (src/commands/notes.ts
 * gives user notes the ids 10·n, n a position no event takes), 1000 for resource events.
 */

export type IssuableEvent = IssueEvent | MergeRequestEvent;

/** One event of the issuable's stream as the log holds it. */
export interface LoggedIssuableEvent<E extends IssuableEvent = IssuableEvent> {
  readonly event: E;
  /** The event's global position (a bigint's text). */
  readonly position: string;
  readonly occurredAt: string;
  readonly actorId: number | null;
}

/** The issuable as it was before an event: what that event's records compare against. */
export interface IssuableBefore {
  readonly title: string;
  readonly authorId: number;
  readonly labelIds: readonly number[];
  readonly milestoneId: number | null;
  readonly assigneeIds: readonly number[];
  readonly state: 'opened' | 'closed' | 'merged';
  /** A merge request's diff: its head, its commits, its target branch (an issue's are empty). */
  readonly headSha: string;
  readonly commitShas: readonly string[];
  readonly targetBranch: string;
  /** The event before changed the target branch (a merge request's next version is no push). */
  readonly targetChanged: boolean;
}

/** A record of an event as the walk gives it: its id, when and by whom, and what the mapping made of it. */
export interface WalkedRecord<R> {
  readonly id: number;
  readonly position: string;
  readonly createdAt: string;
  readonly authorId: number;
  readonly record: R;
}

/**
 * The records of a stream, oldest first: `recordsOf` maps each event, given the issuable
 * before it, to its records in order. An event nobody can be named for (no actor, and no
 * issuable opened before it) has none.
 */
export function walkIssuable<E extends IssuableEvent, R>(
  stream: readonly LoggedIssuableEvent<E>[],
  factor: number,
  recordsOf: (logged: LoggedIssuableEvent<E>, before: IssuableBefore | null) => readonly R[],
): WalkedRecord<R>[] {
  const out: WalkedRecord<R>[] = [];
  let before: IssuableBefore | null = null;
  for (const logged of stream) {
    const records = recordsOf(logged, before);
    const { event } = logged;
    const opened = event.type === 'IssueOpened' || event.type === 'MergeRequestOpened' ? event.data.author_id : null;
    const authorId = logged.actorId ?? before?.authorId ?? opened;
    if (authorId !== null) {
      records.forEach((record, k) => out.push({ id: Number(logged.position) * factor + k, position: logged.position, createdAt: logged.occurredAt, authorId, record }));
    }
    before = fold(before, event);
  }
  return out;
}

/** The fold: the issuable after `event`. */
function fold(before: IssuableBefore | null, event: IssuableEvent): IssuableBefore | null {
  if (event.type === 'IssueOpened') {
    const d = event.data;
    return { title: d.title, authorId: d.author_id, labelIds: d.label_ids, milestoneId: d.milestone_id, assigneeIds: d.assignee_ids, state: 'opened', headSha: '', commitShas: [], targetBranch: '', targetChanged: false };
  }
  if (event.type === 'MergeRequestOpened') {
    const d = event.data;
    return {
      title: d.title,
      authorId: d.author_id,
      labelIds: d.label_ids,
      milestoneId: d.milestone_id,
      assigneeIds: d.assignee_ids,
      state: 'opened',
      headSha: d.version.head_commit_sha,
      commitShas: d.version.commit_shas,
      targetBranch: d.target_branch,
      targetChanged: false,
    };
  }
  if (!before) return before;
  switch (event.type) {
    case 'IssueUpdated':
    case 'MergeRequestUpdated': {
      const c = event.data.changes;
      const targetBranch = 'target_branch' in c ? c.target_branch : undefined;
      return {
        ...before,
        title: c.title ?? before.title,
        labelIds: c.label_ids ?? before.labelIds,
        milestoneId: c.milestone_id !== undefined ? c.milestone_id : before.milestoneId,
        assigneeIds: c.assignee_ids ?? before.assigneeIds,
        targetBranch: targetBranch ?? before.targetBranch,
        targetChanged: targetBranch !== undefined,
      };
    }
    case 'MergeRequestVersionRecorded':
      return { ...before, headSha: event.data.version.head_commit_sha, commitShas: event.data.version.commit_shas, targetChanged: false };
    case 'IssueClosed':
    case 'MergeRequestClosed':
      return { ...before, state: 'closed', targetChanged: false };
    case 'IssueReopened':
    case 'MergeRequestReopened':
      return { ...before, state: 'opened', targetChanged: false };
    case 'MergeRequestMerged':
      return { ...before, state: 'merged', targetChanged: false };
    default:
      return { ...before, targetChanged: false };
  }
}
