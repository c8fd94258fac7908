import { walkIssuable, type IssuableBefore, type IssuableEvent, type LoggedIssuableEvent } from './issuable-history.js';

/**
 * Resource events fall out of the log: GitLab writes a ResourceLabelEvent, ResourceMilestoneEvent
 * or ResourceStateEvent row for each label added or removed, milestone set or unset, and close,
 * reopen or merge of an issue or merge request (ResourceEvents::ChangeLabelsService,
 * ChangeMilestoneService, ChangeStateService); here they are this pure mapping from the
 * issuable's stream, and nothing is written.
 *
 * Ids: the k-th resource event of the event at log position p has the id 1000·p + k (k counts
 * the label, milestone and state records of that one event together, in that order; the walk of
 * ./issuable-history.ts, shared with the system notes), so ids are stable across a rebuild and a
 * replay and no two records of one issuable share one. The factor is 1000 rather than the system
 * notes' 10 because one update may add or remove many labels.
 */

const RESOURCE_EVENT_ID_FACTOR = 1000;

export type IssuableState = 'opened' | 'closed' | 'merged';

interface Base {
  readonly id: number;
  readonly createdAt: string;
  readonly userId: number;
}

export interface LabelEventRecord extends Base {
  readonly kind: 'label';
  readonly labelId: number;
  readonly action: 'add' | 'remove';
}

export interface MilestoneEventRecord extends Base {
  readonly kind: 'milestone';
  readonly milestoneId: number;
  readonly action: 'add' | 'remove';
  /** The issuable's state when the milestone changed (ResourceMilestoneEvent#state). */
  readonly state: IssuableState;
}

export interface StateEventRecord extends Base {
  readonly kind: 'state';
  readonly state: 'closed' | 'reopened' | 'merged';
}

export type ResourceEventRecord = LabelEventRecord | MilestoneEventRecord | StateEventRecord;
export type ResourceEventKind = ResourceEventRecord['kind'];

/** The events of an issue or merge request stream that may yield resource events. */
export const RESOURCE_EVENT_TYPES = [
  'IssueOpened',
  'IssueUpdated',
  'IssueClosed',
  'IssueReopened',
  'MergeRequestOpened',
  'MergeRequestUpdated',
  'MergeRequestClosed',
  'MergeRequestReopened',
  'MergeRequestMerged',
] as const satisfies readonly IssuableEvent['type'][];

type Draft = { kind: 'label'; labelId: number; action: 'add' | 'remove' } | { kind: 'milestone'; milestoneId: number; action: 'add' | 'remove'; state: IssuableState } | { kind: 'state'; state: 'closed' | 'reopened' | 'merged' };

/** ResourceEvents::ChangeLabelsService: the added labels, then the removed ones, each by id. */
function labelDrafts(before: readonly number[], after: readonly number[]): Draft[] {
  const added = after.filter((id) => !before.includes(id)).sort((x, y) => x - y);
  const removed = before.filter((id) => !after.includes(id)).sort((x, y) => x - y);
  return [...added.map((labelId): Draft => ({ kind: 'label', labelId, action: 'add' })), ...removed.map((labelId): Draft => ({ kind: 'label', labelId, action: 'remove' }))];
}

/** ResourceEvents::ChangeMilestoneService: `add` the new milestone, or `remove` naming the old one. */
function milestoneDraft(old: number | null, now: number | null, state: IssuableState): Draft[] {
  if (old === now) return [];
  if (now !== null) return [{ kind: 'milestone', milestoneId: now, action: 'add', state }];
  return old === null ? [] : [{ kind: 'milestone', milestoneId: old, action: 'remove', state }];
}

function draftsOf(event: IssuableEvent, before: IssuableBefore | null): Draft[] {
  switch (event.type) {
    case 'IssueOpened':
    case 'MergeRequestOpened':
      // Issuable::CommonSystemNotesService on create (is_update: false): labels, then milestone.
      return [...labelDrafts([], event.data.label_ids), ...milestoneDraft(null, event.data.milestone_id, 'opened')];
    case 'IssueUpdated':
    case 'MergeRequestUpdated': {
      if (!before) return [];
      const { changes } = event.data;
      return [
        ...(changes.label_ids !== undefined ? labelDrafts(before.labelIds, changes.label_ids) : []),
        ...(changes.milestone_id !== undefined ? milestoneDraft(before.milestoneId, changes.milestone_id, before.state) : []),
      ];
    }
    case 'IssueClosed':
    case 'MergeRequestClosed':
      return [{ kind: 'state', state: 'closed' }];
    case 'IssueReopened':
    case 'MergeRequestReopened':
      return [{ kind: 'state', state: 'reopened' }];
    case 'MergeRequestMerged':
      return [{ kind: 'state', state: 'merged' }];
    default:
      return [];
  }
}

/** Every resource event of an issue or merge request, from its stream's events in order, oldest first. */
export function resourceEvents(stream: readonly LoggedIssuableEvent[]): ResourceEventRecord[] {
  return walkIssuable(stream, RESOURCE_EVENT_ID_FACTOR, (logged, before) => draftsOf(logged.event, before)).map(
    ({ id, createdAt, authorId, record }): ResourceEventRecord => Object.assign(record, { id, createdAt, userId: authorId }),
  );
}
