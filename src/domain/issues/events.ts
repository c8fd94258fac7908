import { z } from 'zod';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';

/**
 * Issues (GitLab's `Issue`): one aggregate per issue, stream `issue-<id>`, in a project. Its
 * `iid` is allocated per project when it is opened (src/commands/issues.ts) and guarded by a
 * claim. A moved issue is a new issue in the target project; the old one is closed and keeps
 * `moved_to_id` (GitLab 12's Issues::MoveService).
 */

const ofIssue = { id: z.int(), project_id: z.int(), iid: z.int() };
/** An issue's link to an epic: the link's id (GitLab's `epic_issue_id`) and the epic's. */
const ofEpicIssue = { ...ofIssue, epic_issue_id: z.int(), epic_id: z.int() };

/** The fields an issue's update may change (only what changed is in the event). */
const changeable = {
  title: z.string(),
  description: z.string().nullable(),
  assignee_ids: z.array(z.int()),
  milestone_id: z.int().nullable(),
  label_ids: z.array(z.int()),
  /** `YYYY-MM-DD`. */
  due_date: z.string().nullable(),
  confidential: z.boolean(),
  discussion_locked: z.boolean().nullable(),
  /** EE's weight (issue_weights). */
  weight: z.int().nullable(),
};

export const issueEvents = {
  IssueOpened: z.strictObject({
    ...ofIssue,
    author_id: z.int(),
    ...changeable,
    /** `created_at` an administrator or owner gave (ISO 8601); null: the event's time. */
    created_at: z.string().nullable(),
    /** The issue this one was moved from (Issues::MoveService), or null. */
    moved_from_id: z.int().nullable(),
  }),
  IssueUpdated: z.strictObject({
    ...ofIssue,
    changes: z.strictObject({
      title: changeable.title.optional(),
      description: changeable.description.optional(),
      assignee_ids: changeable.assignee_ids.optional(),
      milestone_id: changeable.milestone_id.optional(),
      label_ids: changeable.label_ids.optional(),
      due_date: changeable.due_date.optional(),
      confidential: changeable.confidential.optional(),
      discussion_locked: changeable.discussion_locked.optional(),
      weight: changeable.weight.optional(),
    }),
    /** The values the changed title, description and assignees had: what the todos reactor diffs against. */
    previous: z.strictObject({
      title: changeable.title.optional(),
      description: changeable.description.optional(),
      assignee_ids: changeable.assignee_ids.optional(),
    }),
    /** `updated_at` an administrator or owner gave (ISO 8601); null: the event's time. */
    updated_at: z.string().nullable(),
  }),
  /**
   * The title rides along for the activity feed's target_title; `by_id` is GitLab's closed_by.
   * `via_commit`: the pushed commit that closed it (ProcessCommitWorker, CloseService's
   * `closed_via: commit`, "closed via commit <sha>"); absent on other closings and on events
   * written before it was recorded.
   */
  IssueClosed: z.strictObject({ ...ofIssue, title: z.string(), by_id: z.int(), via_commit: z.strictObject({ project_id: z.int(), sha: z.string().regex(/^[0-9a-f]{40}$/) }).optional() }),
  IssueReopened: z.strictObject({ ...ofIssue, title: z.string() }),
  /** Moved to another project: the new issue's id (Issue#moved_to). */
  IssueMoved: z.strictObject({ ...ofIssue, moved_to_id: z.int() }),
  IssueDeleted: z.strictObject(ofIssue),
  IssueTimeEstimateChanged: z.strictObject({ ...ofIssue, time_estimate: z.int().nonnegative() }),
  /** A timelog: seconds spent by a user (negative subtracts); GitLab's reset is a timelog of minus the total. */
  IssueTimeSpent: z.strictObject({ ...ofIssue, user_id: z.int(), time_spent: z.int(), reset: z.boolean() }),
  IssueSubscribed: z.strictObject({ ...ofIssue, user_id: z.int() }),
  IssueUnsubscribed: z.strictObject({ ...ofIssue, user_id: z.int() }),
  /**
   * EE's EpicIssue (ultimate): the issue put in an epic, at a relative position among its
   * issues. An issue is in one epic at most: one already in another epic moves, keeping its
   * link's id (`EpicIssue.find_or_initialize_by(issue:)`), and `previous_epic_id` names the
   * one it left; `epic_group_id` is the epic's group (an epic never changes group).
   */
  IssueAddedToEpic: z.strictObject({ ...ofEpicIssue, epic_group_id: z.int(), relative_position: z.int(), previous_epic_id: z.int().nullable() }),
  /** EpicIssues::UpdateService: a new place among the epic's issues. */
  IssueEpicPositionChanged: z.strictObject({ ...ofEpicIssue, relative_position: z.int() }),
  /** EpicIssues::DestroyService, or the epic deleted. */
  IssueRemovedFromEpic: z.strictObject(ofEpicIssue),
  /**
   * EE's Issues::MoveService#rewrite_epic_issue (`epic_issue.update(issue_id:)`): the moved
   * issue's link passes to the new issue `to_issue_id`, no note written; the original is in no
   * epic after it.
   */
  IssueEpicLinkPassedOn: z.strictObject({ ...ofEpicIssue, to_issue_id: z.int() }),
  /** The same on the new issue: the original's link `epic_issue_id`, with its epic and its place. */
  IssueEpicLinkInherited: z.strictObject({ ...ofEpicIssue, epic_group_id: z.int(), relative_position: z.int(), from_issue_id: z.int() }),
} satisfies EventSchemas;

export type IssueEvent = EventOf<typeof issueEvents>;
export type IssueEventOf<T extends IssueEvent['type']> = Extract<IssueEvent, { type: T }>;

export const issueStreamId = (id: number) => `issue-${id}`;

export const issueEventIndex = (event: IssueEvent): FeedIndex => ({
  projectId: event.data.project_id,
  targetType: 'Issue',
  targetId: event.data.id,
});
