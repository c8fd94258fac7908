import { walkIssuable, type IssuableBefore, type LoggedIssuableEvent } from '../issuable-history.js';
import type { IssueEvent } from '../issues/events.js';
import { assigneesNote, labelsNote, markTitleChange, SYSTEM_NOTE_ID_FACTOR, timeEstimateNote, timeSpentNote, toSystemNote, type SystemNote, type SystemNoteFacts } from './system-notes.js';

/**
 * The system notes of an issue, as ./system-notes.ts gives a merge request's: a pure mapping
 * from the issue's events to GitLab 12's notes (Issuable::CommonSystemNotesService, then
 * Issues::UpdateService#handle_changes; Issues::MoveService; SystemNotes::TimeTrackingService; EE's
 * epic notes),
 * the k-th note of the event at log position p with the id 10·p + k (src/domain/issuable-history.ts).
 */

export interface IssueSystemNoteFacts extends Pick<SystemNoteFacts, 'username' | 'milestoneReference'> {
  /** Issue#to_reference(project) of another issue, by id: `#1`, `project#1` in the namespace, else `group/project#1`. */
  issueReference(id: number): string;
  /** EE's Epic#to_reference(issue's project) of an epic, by id: `&1` for a project of the epic's group, else `group&1`; null for an epic since deleted. */
  epicReference(id: number): string | null;
  /** Commit#to_reference(project) of a commit of a project, by id: the SHA in the issue's project, `project@<sha>` in its namespace, else `group/project@<sha>`. */
  commitReference(projectId: number, sha: string): string;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** SystemNotes::TimeTrackingService#change_due_date: Date#to_s(:long), "June 5, 2020". */
export function dueDateNote(dueDate: string | null): string {
  if (dueDate === null) return 'removed due date';
  const [year, month, day] = dueDate.split('-').map(Number);
  return `changed due date to ${MONTHS[month! - 1]} ${day}, ${year}`;
}

const milestoneNote = (id: number | null, facts: IssueSystemNoteFacts) => (id === null ? 'removed milestone' : `changed milestone to ${facts.milestoneReference(id)}`);

function notesOf(event: IssueEvent, before: IssuableBefore | null, facts: IssueSystemNoteFacts): (string | null)[] {
  switch (event.type) {
    case 'IssueOpened': {
      // Issuable::CommonSystemNotesService with is_update: false, then Issues::MoveService's note on the new issue.
      const d = event.data;
      return [
        d.due_date !== null ? dueDateNote(d.due_date) : null,
        d.milestone_id !== null ? milestoneNote(d.milestone_id, facts) : null,
        labelsNote([], d.label_ids),
        d.moved_from_id !== null ? `moved from ${facts.issueReference(d.moved_from_id)}` : null,
      ];
    }
    case 'IssueUpdated': {
      if (!before) return [];
      const c = event.data.changes;
      const title = c.title !== undefined && c.title !== before.title ? markTitleChange(before.title, c.title) : null;
      return [
        title && `changed title from **${title[0]}** to **${title[1]}**`,
        c.description !== undefined ? 'changed the description' : null,
        c.discussion_locked !== undefined ? `${c.discussion_locked ? 'locked' : 'unlocked'} this issue` : null,
        c.due_date !== undefined ? dueDateNote(c.due_date) : null,
        c.milestone_id !== undefined && c.milestone_id !== before.milestoneId ? milestoneNote(c.milestone_id, facts) : null,
        c.label_ids !== undefined ? labelsNote(before.labelIds, c.label_ids) : null,
        // Issues::UpdateService#handle_changes.
        c.assignee_ids !== undefined ? assigneesNote(event.data.previous.assignee_ids ?? before.assigneeIds, c.assignee_ids, facts) : null,
        c.confidential !== undefined ? (c.confidential ? 'made the issue confidential' : 'made the issue visible to everyone') : null,
      ];
    }
    case 'IssueClosed': {
      // SystemNoteService.change_status with a source: "closed via commit <sha>" (Commit#gfm_reference).
      const via = event.data.via_commit;
      return [via ? `closed via commit ${facts.commitReference(via.project_id, via.sha)}` : 'closed'];
    }
    case 'IssueReopened':
      return ['reopened'];
    case 'IssueMoved':
      return [`moved to ${facts.issueReference(event.data.moved_to_id)}`];
    // EE's SystemNoteService.issue_on_epic (`added to epic`, `removed from epic`) and issue_epic_change (moved from another epic).
    case 'IssueAddedToEpic': {
      const epic = facts.epicReference(event.data.epic_id);
      return [epic === null ? null : event.data.previous_epic_id === null ? `added to epic ${epic}` : `changed epic to ${epic}`];
    }
    case 'IssueRemovedFromEpic': {
      const epic = facts.epicReference(event.data.epic_id);
      return [epic === null ? null : `removed from epic ${epic}`];
    }
    case 'IssueTimeEstimateChanged':
      return [timeEstimateNote(event.data.time_estimate)];
    case 'IssueTimeSpent':
      return [timeSpentNote(event.data.time_spent, event.data.reset)];
    default:
      return [];
  }
}

/** The issue events that may write a system note. */
export const ISSUE_SYSTEM_NOTE_EVENT_TYPES = [
  'IssueOpened',
  'IssueUpdated',
  'IssueClosed',
  'IssueReopened',
  'IssueMoved',
  'IssueTimeEstimateChanged',
  'IssueTimeSpent',
  'IssueAddedToEpic',
  'IssueRemovedFromEpic',
] as const satisfies readonly IssueEvent['type'][];

/** The ids the notes name (users, milestones, issues, epics), for the caller to look up. */
export function issueSystemNoteIds(stream: readonly LoggedIssuableEvent<IssueEvent>[]): { users: Set<number>; milestones: Set<number>; issues: Set<number>; epics: Set<number>; projects: Set<number> } {
  const ids = { users: new Set<number>(), milestones: new Set<number>(), issues: new Set<number>(), epics: new Set<number>(), projects: new Set<number>() };
  let assignees: readonly number[] = [];
  for (const { event } of stream) {
    if (event.type === 'IssueOpened') {
      assignees = event.data.assignee_ids;
      if (event.data.milestone_id !== null) ids.milestones.add(event.data.milestone_id);
      if (event.data.moved_from_id !== null) ids.issues.add(event.data.moved_from_id);
    } else if (event.type === 'IssueUpdated') {
      const c = event.data.changes;
      for (const id of [...assignees, ...(event.data.previous.assignee_ids ?? []), ...(c.assignee_ids ?? [])]) ids.users.add(id);
      if (c.assignee_ids) assignees = c.assignee_ids;
      if (c.milestone_id != null) ids.milestones.add(c.milestone_id);
    } else if (event.type === 'IssueMoved') ids.issues.add(event.data.moved_to_id);
    else if (event.type === 'IssueAddedToEpic' || event.type === 'IssueRemovedFromEpic') ids.epics.add(event.data.epic_id);
    else if (event.type === 'IssueClosed' && event.data.via_commit) ids.projects.add(event.data.via_commit.project_id);
  }
  return ids;
}

/** The system notes of an issue, from its stream's events in order (those of ISSUE_SYSTEM_NOTE_EVENT_TYPES suffice), oldest first. */
export function issueSystemNotes(stream: readonly LoggedIssuableEvent<IssueEvent>[], facts: IssueSystemNoteFacts): SystemNote[] {
  const walked = walkIssuable(stream, SYSTEM_NOTE_ID_FACTOR, (logged, before) => notesOf(logged.event, before, facts).filter((n): n is string => n !== null));
  return walked.map(toSystemNote);
}
