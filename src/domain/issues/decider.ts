import { type Claim, type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from '../decider.js';
import { conflict, invalid, recordNotFound, serviceError } from '../errors.js';
import { decideSubscription, withSubscription, type SubscriptionCommand } from '../subscriptions.js';
import { decideTimeTracking, type TimeTrackingCommand } from '../time-tracking.js';
import type { IssueEvent, IssueEventOf } from './events.js';

/**
 * The issue decider: its state machine (opened ⇄ closed; a moved issue is closed for good),
 * Issue's and Issuable's validations, time tracking, explicit subscriptions and the move.
 * Which fields a caller may set (filter_params) is the route's: the command carries only
 * what is to be set.
 */

// ───────────────────────────── State ─────────────────────────────

export type IssueStatus = 'opened' | 'closed';

export interface IssueRecord {
  readonly projectId: number;
  readonly iid: number;
  readonly authorId: number;
  readonly title: string;
  readonly description: string | null;
  readonly assigneeIds: readonly number[];
  readonly milestoneId: number | null;
  readonly labelIds: readonly number[];
  readonly dueDate: string | null;
  readonly confidential: boolean;
  readonly weight: number | null;
  readonly state: IssueStatus;
  readonly movedToId: number | null;
  readonly timeEstimate: number;
  readonly totalTimeSpent: number;
  readonly subscriptions: ReadonlyMap<number, boolean>;
  /** EE's EpicIssue: the epic the issue is in, or null. */
  readonly epicLink: EpicLink | null;
}

/** An issue's place in an epic (EE's `epic_issues` row): the link's id, the epic's, the position. */
export interface EpicLink {
  readonly id: number;
  readonly epicId: number;
  readonly relativePosition: number;
}

export interface IssueState {
  readonly id: number;
  /** null: never opened, or deleted. */
  readonly issue: IssueRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

export interface IssueFields {
  readonly title?: string | undefined;
  readonly description?: string | null | undefined;
  readonly assigneeIds?: readonly number[] | undefined;
  readonly milestoneId?: number | null | undefined;
  readonly labelIds?: readonly number[] | undefined;
  readonly dueDate?: string | null | undefined;
  readonly confidential?: boolean | undefined;
  readonly discussionLocked?: boolean | null | undefined;
  readonly weight?: number | null | undefined;
}

export type IssueCommand =
  | {
      readonly type: 'OpenIssue';
      readonly projectId: number;
      readonly iid: number;
      readonly authorId: number;
      readonly title: string;
      readonly fields: IssueFields;
      readonly createdAt?: string | undefined;
      readonly movedFromId?: number | undefined;
      /** EE's `epic_id` / `epic_iid`: the epic the new issue goes in. */
      readonly epic?: EpicPlacement | undefined;
      /** A moved issue's epic link, which the new issue takes (EE's Issues::MoveService#rewrite_epic_issue). */
      readonly inheritedEpicLink?: InheritedEpicLink | undefined;
    }
  | {
      readonly type: 'UpdateIssue';
      readonly fields: IssueFields;
      readonly stateEvent?: 'close' | 'reopen' | undefined;
      readonly byId: number;
      readonly updatedAt?: string | undefined;
      /** EE's `epic_id` / `epic_iid`: into that epic, or (null, `epic_id=0`) out of any; undefined: unchanged. */
      readonly epic?: EpicPlacement | null | undefined;
      /** The pushed commit a close comes from (ProcessCommitWorker: CloseService's `closed_via: commit`). */
      readonly viaCommit?: { readonly projectId: number; readonly sha: string } | undefined;
    }
  /**
   * Issues::MoveService's end for the original: closed, with the new issue's id; `epicLinkId`,
   * its epic link, passed on to the new issue (EE's rewrite_epic_issue).
   */
  | { readonly type: 'MoveIssue'; readonly toId: number; readonly byId: number; readonly epicLinkId?: number | undefined }
  | { readonly type: 'DeleteIssue' }
  /**
   * EpicIssues::CreateService for this issue: into `epicId` at `relativePosition`; `newLinkId`
   * names the link when the issue is in no epic yet (one in another epic moves with its link).
   */
  | ({ readonly type: 'AddIssueToEpic' } & EpicPlacement)
  /** EpicIssues::UpdateService: a new place in the issue's epic. */
  | { readonly type: 'ChangeEpicPosition'; readonly epicId: number; readonly relativePosition: number }
  /** EpicIssues::DestroyService: out of `epicId`. */
  | { readonly type: 'RemoveIssueFromEpic'; readonly epicId: number }
  | TimeTrackingCommand
  | SubscriptionCommand;

/** A moved issue's epic link as the new issue takes it. */
export interface InheritedEpicLink {
  readonly id: number;
  readonly epicId: number;
  readonly epicGroupId: number;
  readonly relativePosition: number;
  readonly fromIssueId: number;
}

/** Where an issue goes in an epic: the epic, the link's id if the issue is in no epic yet, its position. */
export interface EpicPlacement {
  readonly epicId: number;
  readonly epicGroupId: number;
  readonly newLinkId: number;
  readonly relativePosition: number;
}

// ───────────────────────────── Rules ─────────────────────────────

const TITLE_MAX = 255;
/** Issuable: `validates :description, length: { maximum: 1.megabyte }` — characters. */
const DESCRIPTION_MAX = 1_048_576;
/** EE's Issue: `validates :weight, allow_nil: true, numericality: { greater_than_or_equal_to: 0 }`. */
function validate(f: IssueFields) {
  const fields: Record<string, string[]> = {};
  if (f.title !== undefined) {
    const titles = [];
    if (f.title.trim() === '') titles.push("can't be blank");
    if (f.title.length > TITLE_MAX) titles.push(`is too long (maximum is ${TITLE_MAX} characters)`);
    if (titles.length > 0) fields.title = titles;
  }
  if (f.description != null && f.description.length > DESCRIPTION_MAX) fields.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
  if (f.weight != null && f.weight < 0) fields.weight = ['must be greater than or equal to 0'];
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

const sameIds = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((id, i) => id === b[i]);

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: IssueState, event: IssueEvent): IssueState {
  if (event.type === 'IssueOpened') {
    const d = event.data;
    return {
      ...state,
      issue: {
        projectId: d.project_id,
        iid: d.iid,
        authorId: d.author_id,
        title: d.title,
        description: d.description,
        assigneeIds: d.assignee_ids,
        milestoneId: d.milestone_id,
        labelIds: d.label_ids,
        dueDate: d.due_date,
        confidential: d.confidential,
        weight: d.weight,
        state: 'opened',
        movedToId: null,
        timeEstimate: 0,
        totalTimeSpent: 0,
        subscriptions: new Map(),
        epicLink: null,
      },
    };
  }
  const issue = state.issue;
  if (!issue) return state;
  const next = (changes: Partial<IssueRecord>): IssueState => ({ ...state, issue: { ...issue, ...changes } });
  switch (event.type) {
    case 'IssueUpdated': {
      const c = event.data.changes;
      return next({
        ...(c.title !== undefined ? { title: c.title } : {}),
        ...(c.description !== undefined ? { description: c.description } : {}),
        ...(c.assignee_ids !== undefined ? { assigneeIds: c.assignee_ids } : {}),
        ...(c.milestone_id !== undefined ? { milestoneId: c.milestone_id } : {}),
        ...(c.label_ids !== undefined ? { labelIds: c.label_ids } : {}),
        ...(c.due_date !== undefined ? { dueDate: c.due_date } : {}),
        ...(c.confidential !== undefined ? { confidential: c.confidential } : {}),
        ...(c.weight !== undefined ? { weight: c.weight } : {}),
      });
    }
    case 'IssueClosed':
      return next({ state: 'closed' });
    case 'IssueReopened':
      return next({ state: 'opened' });
    case 'IssueMoved':
      return next({ movedToId: event.data.moved_to_id });
    case 'IssueDeleted':
      return { ...state, issue: null };
    case 'IssueTimeEstimateChanged':
      return next({ timeEstimate: event.data.time_estimate });
    case 'IssueTimeSpent':
      return next({ totalTimeSpent: issue.totalTimeSpent + event.data.time_spent });
    case 'IssueSubscribed':
    case 'IssueUnsubscribed':
      return next({ subscriptions: withSubscription(issue.subscriptions, event.data.user_id, event.type === 'IssueSubscribed') });
    case 'IssueAddedToEpic':
    case 'IssueEpicPositionChanged':
    case 'IssueEpicLinkInherited':
      return next({ epicLink: { id: event.data.epic_issue_id, epicId: event.data.epic_id, relativePosition: event.data.relative_position } });
    case 'IssueRemovedFromEpic':
    case 'IssueEpicLinkPassedOn':
      return next({ epicLink: null });
    default:
      return unhandled(event);
  }
}

function decide(command: IssueCommand, state: IssueState): IssueEvent[] {
  if (command.type === 'OpenIssue') {
    if (state.issue) throw conflict('Issue already exists');
    const f = command.fields;
    validate({ ...f, title: command.title });
    const { epic, inheritedEpicLink: inherited } = command;
    const of = { id: state.id, project_id: command.projectId, iid: command.iid };
    const added: IssueEvent[] = epic
      ? [{ type: 'IssueAddedToEpic', data: { ...of, epic_issue_id: epic.newLinkId, epic_id: epic.epicId, epic_group_id: epic.epicGroupId, relative_position: epic.relativePosition, previous_epic_id: null } }]
      : inherited
        ? [{ type: 'IssueEpicLinkInherited', data: { ...of, epic_issue_id: inherited.id, epic_id: inherited.epicId, epic_group_id: inherited.epicGroupId, relative_position: inherited.relativePosition, from_issue_id: inherited.fromIssueId } }]
        : [];
    return [
      {
        type: 'IssueOpened',
        data: {
          id: state.id,
          project_id: command.projectId,
          iid: command.iid,
          author_id: command.authorId,
          title: command.title,
          description: f.description ?? null,
          assignee_ids: [...(f.assigneeIds ?? [])],
          milestone_id: f.milestoneId ?? null,
          label_ids: [...(f.labelIds ?? [])],
          due_date: f.dueDate ?? null,
          confidential: f.confidential ?? false,
          discussion_locked: f.discussionLocked ?? null,
          weight: f.weight ?? null,
          created_at: command.createdAt ?? null,
          moved_from_id: command.movedFromId ?? null,
        },
      },
      ...added,
    ];
  }
  const issue = state.issue;
  if (!issue) throw recordNotFound('Issue');
  const of = { id: state.id, project_id: issue.projectId, iid: issue.iid };
  switch (command.type) {
    case 'UpdateIssue':
      return decideUpdate(command, issue, of);
    case 'MoveIssue': {
      // Issue#can_move?: an issue moved once is not moved again (the API's MoveError, 400).
      if (issue.movedToId !== null) throw serviceError('Cannot move issue due to insufficient permissions!');
      const events: IssueEvent[] = [];
      if (command.epicLinkId !== undefined) {
        const link = issue.epicLink;
        // The link read for the new issue is the one the original still has.
        if (link?.id !== command.epicLinkId) throw conflict('Issue epic link changed');
        events.push({ type: 'IssueEpicLinkPassedOn', data: { ...of, epic_issue_id: link.id, epic_id: link.epicId, to_issue_id: command.toId } });
      }
      if (issue.state === 'opened') events.push({ type: 'IssueClosed', data: { ...of, title: issue.title, by_id: command.byId } });
      events.push({ type: 'IssueMoved', data: { ...of, moved_to_id: command.toId } });
      return events;
    }
    case 'DeleteIssue':
      return [{ type: 'IssueDeleted', data: of }];
    case 'SetTimeEstimate':
    case 'AddSpentTime':
    case 'ResetSpentTime': {
      const change = decideTimeTracking(command, issue);
      if (change === null) return [];
      if ('estimate' in change) return [{ type: 'IssueTimeEstimateChanged', data: { ...of, time_estimate: change.estimate } }];
      return [{ type: 'IssueTimeSpent', data: { ...of, user_id: change.userId, time_spent: change.spent, reset: change.reset } }];
    }
    case 'Subscribe':
    case 'Unsubscribe': {
      const data = { ...of, user_id: command.userId };
      return decideSubscription(command, issue) ? [{ type: 'IssueSubscribed', data }] : [{ type: 'IssueUnsubscribed', data }];
    }
    case 'AddIssueToEpic':
      // IssuableLinks::CreateService: every issue asked for already in the epic is a conflict.
      if (issue.epicLink?.epicId === command.epicId) throw conflict('Issue(s) already assigned');
      return addToEpic(issue, of, command);
    case 'ChangeEpicPosition': {
      const link = issue.epicLink;
      // `epic.epic_issues.find(params[:epic_issue_id])`.
      if (link?.epicId !== command.epicId) throw recordNotFound();
      if (link.relativePosition === command.relativePosition) return [];
      return [{ type: 'IssueEpicPositionChanged', data: { ...of, epic_issue_id: link.id, epic_id: link.epicId, relative_position: command.relativePosition } }];
    }
    case 'RemoveIssueFromEpic': {
      const link = issue.epicLink;
      if (link?.epicId !== command.epicId) throw recordNotFound();
      return [{ type: 'IssueRemovedFromEpic', data: { ...of, epic_issue_id: link.id, epic_id: link.epicId } }];
    }
    default:
      return unhandled(command);
  }
}

/** EpicIssues::CreateService for one issue: into the epic, moving from another with its link. */
function addToEpic(issue: IssueRecord, of: { id: number; project_id: number; iid: number }, placement: EpicPlacement): IssueEvent[] {
  const link = issue.epicLink;
  const data = { ...of, epic_issue_id: link?.id ?? placement.newLinkId, epic_id: placement.epicId, epic_group_id: placement.epicGroupId, relative_position: placement.relativePosition };
  return [{ type: 'IssueAddedToEpic', data: { ...data, previous_epic_id: link?.epicId ?? null } }];
}

/**
 * EE's Issues::UpdateService#handle_epic: an epic given links the issue (nothing when it is in
 * that epic already: the service's conflict is not the update's error), `epic_id=0` unlinks it.
 */
function epicChange(issue: IssueRecord, of: { id: number; project_id: number; iid: number }, epic: EpicPlacement | null | undefined): IssueEvent[] {
  if (epic === undefined) return [];
  const link = issue.epicLink;
  if (epic === null) return link ? [{ type: 'IssueRemovedFromEpic', data: { ...of, epic_issue_id: link.id, epic_id: link.epicId } }] : [];
  return link?.epicId === epic.epicId ? [] : addToEpic(issue, of, epic);
}

/** Issues::UpdateService: only what changed is recorded; a state event closes or reopens. */
function decideUpdate(command: Extract<IssueCommand, { type: 'UpdateIssue' }>, issue: IssueRecord, of: { id: number; project_id: number; iid: number }): IssueEvent[] {
  const f = command.fields;
  validate(f);
  const changes: IssueEventOf<'IssueUpdated'>['data']['changes'] = {
    ...(f.title !== undefined && f.title !== issue.title ? { title: f.title } : {}),
    ...(f.description !== undefined && f.description !== issue.description ? { description: f.description } : {}),
    ...(f.assigneeIds !== undefined && !sameIds(f.assigneeIds, issue.assigneeIds) ? { assignee_ids: [...f.assigneeIds] } : {}),
    ...(f.milestoneId !== undefined && f.milestoneId !== issue.milestoneId ? { milestone_id: f.milestoneId } : {}),
    ...(f.labelIds !== undefined && !sameIds(f.labelIds, issue.labelIds) ? { label_ids: [...f.labelIds] } : {}),
    ...(f.dueDate !== undefined && f.dueDate !== issue.dueDate ? { due_date: f.dueDate } : {}),
    ...(f.confidential !== undefined && f.confidential !== issue.confidential ? { confidential: f.confidential } : {}),
    ...(f.discussionLocked !== undefined ? { discussion_locked: f.discussionLocked } : {}),
    ...(f.weight !== undefined && f.weight !== issue.weight ? { weight: f.weight } : {}),
  };
  const previous = {
    ...(changes.title !== undefined ? { title: issue.title } : {}),
    ...(changes.description !== undefined ? { description: issue.description } : {}),
    ...(changes.assignee_ids !== undefined ? { assignee_ids: [...issue.assigneeIds] } : {}),
  };
  const events: IssueEvent[] = epicChange(issue, of, command.epic);
  if (Object.keys(changes).length > 0 || command.updatedAt !== undefined) {
    events.push({ type: 'IssueUpdated', data: { ...of, changes, previous, updated_at: command.updatedAt ?? null } });
  }
  const title = changes.title ?? issue.title;
  if (command.stateEvent === 'close' && issue.state === 'opened') {
    const via = command.viaCommit && { via_commit: { project_id: command.viaCommit.projectId, sha: command.viaCommit.sha } };
    events.push({ type: 'IssueClosed', data: { ...of, title, by_id: command.byId, ...via } });
  }
  // A moved issue stays closed (Issues::ReopenService: `return issue unless can?(… :reopen_issue …)`; a moved issue's is refused).
  if (command.stateEvent === 'reopen' && issue.state === 'closed' && issue.movedToId === null) events.push({ type: 'IssueReopened', data: { ...of, title } });
  return events;
}

export const issueDecider: Decider<IssueCommand, IssueEvent, IssueState, number> = {
  initialState: (id) => ({ id, issue: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** An iid is its project's once, for good: GitLab's InternalId never hands one out twice. */
export const issueIidClaim = (projectId: number, iid: number): Claim => ({
  kind: 'issue_iid',
  key: `${projectId}/${iid}`,
  // GitLab: an iid given on create that is taken is ActiveRecord::RecordNotUnique, "409 Duplicated issue".
  conflictMessage: 'Duplicated issue',
});

export function issueClaims(event: IssueEvent): ClaimChanges {
  return event.type === 'IssueOpened' ? { acquire: [issueIidClaim(event.data.project_id, event.data.iid)], release: [] } : NO_CLAIMS;
}
