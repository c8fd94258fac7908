import { type Claim, type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from '../decider.js';
import { conflict, invalid, notAllowed, notAcceptable, recordNotFound, unprocessable } from '../errors.js';
import { isWorkInProgress } from '../issuable-text.js';
import { decideSubscription, withSubscription, type SubscriptionCommand } from '../subscriptions.js';

export { isSubscribed } from '../subscriptions.js';
import { decideTimeTracking, type TimeTrackingCommand } from '../time-tracking.js';
import { type MergeRequestEvent, type MergeStatus, type VersionData } from './events.js';

/**
 * The merge request decider: its state machine (opened → closed ⇄ opened → merged; merged
 * is final), its validations (MergeRequest#validate_branches, Issuable's lengths), time
 * tracking, explicit subscriptions and diff versions. Facts from other streams (branch heads,
 * other open merge requests, the mergeability of the heads) arrive in the command, read in
 * the write transaction by src/commands/merge-requests.ts.
 */

// ───────────────────────────── State ─────────────────────────────

export type MergeRequestStatus = 'opened' | 'closed' | 'merged';

export interface MergeRequestRecord {
  readonly projectId: number;
  /** The project of the source branch: the project itself, or a project of its fork network. */
  readonly sourceProjectId: number;
  readonly iid: number;
  readonly authorId: number;
  readonly title: string;
  readonly description: string | null;
  readonly sourceBranch: string;
  readonly targetBranch: string;
  readonly assigneeIds: readonly number[];
  readonly milestoneId: number | null;
  readonly labelIds: readonly number[];
  readonly state: MergeRequestStatus;
  readonly squash: boolean;
  readonly timeEstimate: number;
  readonly totalTimeSpent: number;
  /** Explicit subscriptions (GitLab's `subscriptions` rows): user → subscribed. */
  readonly subscriptions: ReadonlyMap<number, boolean>;
  /** The latest diff version's id and head; the last mergeability check. */
  readonly latestVersion: VersionData;
  readonly mergeStatus: MergeStatus | 'unchecked';
}

export interface MergeRequestState {
  readonly id: number;
  /** null: never opened, or deleted. */
  readonly mergeRequest: MergeRequestRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** What the write transaction found of the branches and of the project's other merge requests. */
export interface BranchFacts {
  /** Whether the branches named exist in the repository. */
  readonly sourceExists: boolean;
  readonly targetExists: boolean;
  /** The iid of another open merge request of the same source and target branch, if any. */
  readonly openDuplicateIid: number | null;
}

export interface MergeRequestFields {
  readonly title?: string | undefined;
  readonly description?: string | null | undefined;
  readonly targetBranch?: string | undefined;
  readonly assigneeIds?: readonly number[] | undefined;
  readonly milestoneId?: number | null | undefined;
  readonly labelIds?: readonly number[] | undefined;
  readonly discussionLocked?: boolean | null | undefined;
  readonly squash?: boolean | undefined;
  readonly forceRemoveSourceBranch?: boolean | undefined;
  readonly allowCollaboration?: boolean | undefined;
}

export type MergeRequestCommand =
  | {
      readonly type: 'OpenMergeRequest';
      readonly projectId: number;
      readonly sourceProjectId: number;
      readonly iid: number;
      readonly authorId: number;
      readonly title: string;
      readonly sourceBranch: string;
      readonly targetBranch: string;
      readonly fields: MergeRequestFields;
      readonly branches: BranchFacts;
      /** The first version; null when a branch is missing (the command is refused then). */
      readonly version: VersionData | null;
      /**
       * The merge status of the version's heads (`sourceSha` its head, `targetSha` its start),
       * checked in the opening's transaction: recorded with the opening, so that no later
       * check has to merge the same heads again (GitLab checks an opened merge request after it).
       */
      readonly mergeStatus?: MergeStatus | undefined;
    }
  | {
      readonly type: 'UpdateMergeRequest';
      readonly fields: MergeRequestFields;
      readonly stateEvent?: 'close' | 'reopen' | undefined;
      readonly byId: number;
      /** Facts of the branches the merge request would have after the update (target changed, or reopened). */
      readonly branches?: BranchFacts | undefined;
      /** A diff version against the new target branch, when it changes (MergeRequest#reload_diff_if_branch_changed). */
      readonly version?: VersionData | null | undefined;
    }
  | {
      readonly type: 'MergeMergeRequest';
      readonly byId: number;
      /** `sha` of PUT …/merge: the source head the caller saw (409 when it moved). */
      readonly expectedSha?: string | undefined;
      /** The merge made in the write transaction; null when the heads conflict (406). */
      readonly merge: { readonly mergeCommitSha: string; readonly squashCommitSha: string | null } | null;
      readonly squash?: boolean | undefined;
      /** Whether both branches exist in the write transaction (MergeRequest#branch_missing? when not). */
      readonly branchesExist?: boolean | undefined;
      /** `merge_when_pipeline_succeeds`: with no pipeline it is neither immediately nor automatically mergeable. */
      readonly whenPipelineSucceeds?: boolean | undefined;
    }
  | { readonly type: 'DeleteMergeRequest' }
  | { readonly type: 'RecordVersion'; readonly version: VersionData }
  | { readonly type: 'RecordMergeStatus'; readonly mergeStatus: MergeStatus; readonly sourceSha: string; readonly targetSha: string }
  /** A push to the target branch brought the source head `headSha` in, merged by `mergeCommitSha` (RefreshService#post_merge_manually_merged). */
  | { readonly type: 'RecordMergedByPush'; readonly byId: number; readonly headSha: string; readonly mergeCommitSha: string }
  | { readonly type: 'RecordRebaseFailure'; readonly error: string }
  /** GET …/merge_ref's check of the heads (MergeabilityCheckService): their status, and the merge ref made when they merge. */
  | { readonly type: 'RecordMergeRef'; readonly sourceSha: string; readonly targetSha: string; readonly mergeStatus: MergeStatus; readonly commitSha: string | null }
  | TimeTrackingCommand
  | SubscriptionCommand;

// ───────────────────────────── Rules ─────────────────────────────

const TITLE_MAX = 255;
/** Issuable: `validates :description, length: { maximum: 1.megabyte }` — characters. */
export const DESCRIPTION_MAX = 1_048_576;

function validateText(fields: Record<string, string[]>, title: string | undefined, description: string | null | undefined) {
  if (title !== undefined) {
    const titles = [];
    if (title.trim() === '') titles.push("can't be blank");
    if (title.length > TITLE_MAX) titles.push(`is too long (maximum is ${TITLE_MAX} characters)`);
    if (titles.length > 0) fields.title = titles;
  }
  if (description != null && description.length > DESCRIPTION_MAX) fields.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
}

/**
 * MergeRequest#validate_branches and the branch checks of the create service: the same branch
 * of the same project for source and target is its `branch_conflict` error, which the API's
 * handle_merge_request_errors! answers 422 `{"message":[…]}`; another open merge request of
 * the same branches is `validate_branches`, answered 409 `{"message":[…]}`; a branch that
 * does not exist is a field error.
 */
function validateBranches(sameProject: boolean, sourceBranch: string, targetBranch: string, facts: BranchFacts) {
  if (sameProject && sourceBranch === targetBranch) throw unprocessable(["You can't use same project/branch for source and target"]);
  const fields: Record<string, string[]> = {};
  if (!facts.sourceExists) fields.source_branch = ['does not exist'];
  if (!facts.targetExists) fields.target_branch = ['does not exist'];
  if (Object.keys(fields).length > 0) throw invalid(fields);
  if (facts.openDuplicateIid !== null) throw conflict([`Another open merge request already exists for this source branch: !${facts.openDuplicateIid}`]);
}

const sameIds = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((id, i) => id === b[i]);

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: MergeRequestState, event: MergeRequestEvent): MergeRequestState {
  if (event.type === 'MergeRequestOpened') {
    const d = event.data;
    return {
      ...state,
      mergeRequest: {
        projectId: d.project_id,
        sourceProjectId: d.source_project_id,
        iid: d.iid,
        authorId: d.author_id,
        title: d.title,
        description: d.description,
        sourceBranch: d.source_branch,
        targetBranch: d.target_branch,
        assigneeIds: d.assignee_ids,
        milestoneId: d.milestone_id,
        labelIds: d.label_ids,
        state: 'opened',
        squash: d.squash,
        timeEstimate: 0,
        totalTimeSpent: 0,
        subscriptions: new Map(),
        latestVersion: d.version,
        mergeStatus: 'unchecked',
      },
    };
  }
  const mr = state.mergeRequest;
  if (!mr) return state;
  const next = (changes: Partial<MergeRequestRecord>): MergeRequestState => ({ ...state, mergeRequest: { ...mr, ...changes } });
  switch (event.type) {
    case 'MergeRequestUpdated': {
      const c = event.data.changes;
      return next({
        ...(c.title !== undefined ? { title: c.title } : {}),
        ...(c.description !== undefined ? { description: c.description } : {}),
        ...(c.target_branch !== undefined ? { targetBranch: c.target_branch, mergeStatus: 'unchecked' as const } : {}),
        ...(c.assignee_ids !== undefined ? { assigneeIds: c.assignee_ids } : {}),
        ...(c.milestone_id !== undefined ? { milestoneId: c.milestone_id } : {}),
        ...(c.label_ids !== undefined ? { labelIds: c.label_ids } : {}),
        ...(c.squash !== undefined ? { squash: c.squash } : {}),
      });
    }
    case 'MergeRequestClosed':
      return next({ state: 'closed' });
    case 'MergeRequestReopened':
      return next({ state: 'opened', mergeStatus: 'unchecked' });
    case 'MergeRequestMerged':
      return next({ state: 'merged' });
    case 'MergeRequestDeleted':
      return { ...state, mergeRequest: null };
    case 'MergeRequestVersionRecorded':
      return next({ latestVersion: event.data.version, mergeStatus: 'unchecked' });
    case 'MergeRequestMergeStatusChecked':
      return next({ mergeStatus: event.data.merge_status });
    case 'MergeRequestRebaseFailed':
    case 'MergeRequestMergeRefUpdated':
      return state;
    case 'MergeRequestTimeEstimateChanged':
      return next({ timeEstimate: event.data.time_estimate });
    case 'MergeRequestTimeSpent':
      return next({ totalTimeSpent: mr.totalTimeSpent + event.data.time_spent });
    case 'MergeRequestSubscribed':
    case 'MergeRequestUnsubscribed': {
      return next({ subscriptions: withSubscription(mr.subscriptions, event.data.user_id, event.type === 'MergeRequestSubscribed') });
    }
    default:
      return unhandled(event);
  }
}

function decide(command: MergeRequestCommand, state: MergeRequestState): MergeRequestEvent[] {
  if (command.type === 'OpenMergeRequest') {
    if (state.mergeRequest) throw conflict('Merge request already exists');
    const f = command.fields;
    const fields: Record<string, string[]> = {};
    validateText(fields, command.title, f.description);
    if (Object.keys(fields).length > 0) throw invalid(fields);
    validateBranches(command.sourceProjectId === command.projectId, command.sourceBranch, command.targetBranch, command.branches);
    if (!command.version) throw invalid({ source_branch: ['does not exist'] });
    return [
      {
        type: 'MergeRequestOpened',
        data: {
          id: state.id,
          project_id: command.projectId,
          iid: command.iid,
          author_id: command.authorId,
          source_project_id: command.sourceProjectId,
          source_branch: command.sourceBranch,
          title: command.title,
          description: f.description ?? null,
          target_branch: command.targetBranch,
          assignee_ids: [...(f.assigneeIds ?? [])],
          milestone_id: f.milestoneId ?? null,
          label_ids: [...(f.labelIds ?? [])],
          discussion_locked: f.discussionLocked ?? null,
          squash: f.squash ?? false,
          force_remove_source_branch: f.forceRemoveSourceBranch ?? false,
          allow_collaboration: f.allowCollaboration ?? false,
          version: command.version,
        },
      },
      ...(command.mergeStatus === undefined
        ? []
        : [
            {
              type: 'MergeRequestMergeStatusChecked' as const,
              data: {
                id: state.id,
                project_id: command.projectId,
                iid: command.iid,
                merge_status: command.mergeStatus,
                source_sha: command.version.head_commit_sha,
                target_sha: command.version.start_commit_sha,
              },
            },
          ]),
    ];
  }
  const mr = state.mergeRequest;
  if (!mr) throw recordNotFound('Merge Request');
  const of = { id: state.id, project_id: mr.projectId, iid: mr.iid };
  switch (command.type) {
    case 'UpdateMergeRequest':
      return decideUpdate(command, mr, of);
    case 'MergeMergeRequest': {
      // API::MergeRequests#merge (12.x): not_allowed! unless MergeRequest#mergeable_state? (open, not a
      // work in progress, not broken: commits, both branches, not already found cannot_be_merged), and
      // with merge_when_pipeline_succeeds unless a pipeline succeeded or runs (there are none); then
      // 406 when the merge conflicts, then 409 when `sha` is not the diff head.
      if (mr.state !== 'opened' || isWorkInProgress(mr.title) || command.whenPipelineSucceeds === true) throw notAllowed();
      if (command.branchesExist === false || mr.latestVersion.commit_shas.length === 0) throw notAllowed();
      if (!command.merge && mr.mergeStatus === 'cannot_be_merged') throw notAllowed();
      if (!command.merge) throw notAcceptable('Branch cannot be merged');
      if (command.expectedSha !== undefined && command.expectedSha !== mr.latestVersion.head_commit_sha) {
        throw conflict(`SHA does not match HEAD of source branch: ${mr.latestVersion.head_commit_sha}`);
      }
      const events: MergeRequestEvent[] = [];
      if (command.squash !== undefined && command.squash !== mr.squash) events.push({ type: 'MergeRequestUpdated', data: { ...of, changes: { squash: command.squash }, previous: {} } });
      events.push({
        type: 'MergeRequestMerged',
        data: { ...of, title: mr.title, by_id: command.byId, merge_commit_sha: command.merge.mergeCommitSha, squash_commit_sha: command.merge.squashCommitSha },
      });
      return events;
    }
    case 'DeleteMergeRequest':
      return [{ type: 'MergeRequestDeleted', data: of }];
    case 'RecordVersion':
      if (mr.state !== 'opened' || command.version.head_commit_sha === mr.latestVersion.head_commit_sha) return [];
      return [{ type: 'MergeRequestVersionRecorded', data: { ...of, version: command.version } }];
    case 'RecordMergedByPush':
      // Only while the head is still the merge request's, and its diff is not empty (GitLab's merge_request_diff.state != 'empty').
      if (mr.state !== 'opened' || command.headSha !== mr.latestVersion.head_commit_sha || mr.latestVersion.commit_shas.length === 0) return [];
      return [{ type: 'MergeRequestMerged', data: { ...of, title: mr.title, by_id: command.byId, merge_commit_sha: command.mergeCommitSha, squash_commit_sha: null } }];
    case 'RecordMergeRef': {
      if (mr.state !== 'opened' || command.sourceSha !== mr.latestVersion.head_commit_sha) return [];
      const events: MergeRequestEvent[] = [];
      if (command.mergeStatus !== mr.mergeStatus) {
        events.push({ type: 'MergeRequestMergeStatusChecked', data: { ...of, merge_status: command.mergeStatus, source_sha: command.sourceSha, target_sha: command.targetSha } });
      }
      if (command.commitSha !== null) {
        events.push({ type: 'MergeRequestMergeRefUpdated', data: { ...of, commit_sha: command.commitSha, target_sha: command.targetSha, source_sha: command.sourceSha } });
      }
      return events;
    }
    case 'RecordRebaseFailure':
      return mr.state === 'opened' ? [{ type: 'MergeRequestRebaseFailed', data: { ...of, merge_error: command.error } }] : [];
    case 'RecordMergeStatus':
      // A check of heads that are no longer the merge request's (a later push) is dropped: its own check follows.
      if (mr.state !== 'opened' || command.sourceSha !== mr.latestVersion.head_commit_sha || command.mergeStatus === mr.mergeStatus) return [];
      return [{ type: 'MergeRequestMergeStatusChecked', data: { ...of, merge_status: command.mergeStatus, source_sha: command.sourceSha, target_sha: command.targetSha } }];
    case 'SetTimeEstimate':
    case 'AddSpentTime':
    case 'ResetSpentTime': {
      const change = decideTimeTracking(command, mr);
      if (change === null) return [];
      if ('estimate' in change) return [{ type: 'MergeRequestTimeEstimateChanged', data: { ...of, time_estimate: change.estimate } }];
      return [{ type: 'MergeRequestTimeSpent', data: { ...of, user_id: change.userId, time_spent: change.spent, reset: change.reset } }];
    }
    case 'Subscribe':
    case 'Unsubscribe': {
      const data = { ...of, user_id: command.userId };
      return decideSubscription(command, mr) ? [{ type: 'MergeRequestSubscribed', data }] : [{ type: 'MergeRequestUnsubscribed', data }];
    }
    default:
      return unhandled(command);
  }
}

/** MergeRequests::UpdateService: only what changed is recorded; a state event closes or reopens. */
function decideUpdate(
  command: Extract<MergeRequestCommand, { type: 'UpdateMergeRequest' }>,
  mr: MergeRequestRecord,
  of: { id: number; project_id: number; iid: number },
): MergeRequestEvent[] {
  const f = command.fields;
  const fields: Record<string, string[]> = {};
  validateText(fields, f.title, f.description);
  if (Object.keys(fields).length > 0) throw invalid(fields);
  const targetBranch = f.targetBranch ?? mr.targetBranch;
  const reopening = command.stateEvent === 'reopen' && mr.state === 'closed';
  if ((targetBranch !== mr.targetBranch || reopening) && command.branches) validateBranches(mr.sourceProjectId === mr.projectId, mr.sourceBranch, targetBranch, command.branches);
  const changes: Extract<MergeRequestEvent, { type: 'MergeRequestUpdated' }>['data']['changes'] = {
    ...(f.title !== undefined && f.title !== mr.title ? { title: f.title } : {}),
    ...(f.description !== undefined && f.description !== mr.description ? { description: f.description } : {}),
    ...(targetBranch !== mr.targetBranch ? { target_branch: targetBranch } : {}),
    ...(f.assigneeIds !== undefined && !sameIds(f.assigneeIds, mr.assigneeIds) ? { assignee_ids: [...f.assigneeIds] } : {}),
    ...(f.milestoneId !== undefined && f.milestoneId !== mr.milestoneId ? { milestone_id: f.milestoneId } : {}),
    ...(f.labelIds !== undefined && !sameIds(f.labelIds, mr.labelIds) ? { label_ids: [...f.labelIds] } : {}),
    ...(f.discussionLocked !== undefined ? { discussion_locked: f.discussionLocked } : {}),
    ...(f.squash !== undefined && f.squash !== mr.squash ? { squash: f.squash } : {}),
    ...(f.forceRemoveSourceBranch !== undefined ? { force_remove_source_branch: f.forceRemoveSourceBranch } : {}),
    ...(f.allowCollaboration !== undefined ? { allow_collaboration: f.allowCollaboration } : {}),
  };
  const events: MergeRequestEvent[] = [];
  // A merged merge request keeps its state; its fields may still change (GitLab allows editing a merged MR's title).
  const previous = {
    ...(changes.title !== undefined ? { title: mr.title } : {}),
    ...(changes.description !== undefined ? { description: mr.description } : {}),
    ...(changes.assignee_ids !== undefined ? { assignee_ids: [...mr.assigneeIds] } : {}),
  };
  if (Object.keys(changes).length > 0) events.push({ type: 'MergeRequestUpdated', data: { ...of, changes, previous } });
  // reload_diff_if_branch_changed: an open merge request whose target moved gets a version against it.
  if (changes.target_branch !== undefined && command.version && mr.state === 'opened') {
    events.push({ type: 'MergeRequestVersionRecorded', data: { ...of, version: command.version } });
  }
  const title = changes.title ?? mr.title;
  if (command.stateEvent === 'close' && mr.state === 'opened') events.push({ type: 'MergeRequestClosed', data: { ...of, title, by_id: command.byId } });
  if (reopening) events.push({ type: 'MergeRequestReopened', data: { ...of, title } });
  return events;
}

export const mergeRequestDecider: Decider<MergeRequestCommand, MergeRequestEvent, MergeRequestState, number> = {
  initialState: (id) => ({ id, mergeRequest: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** An iid is its project's once, for good: GitLab's InternalId never hands one out twice, deleted merge requests included. */
export const mergeRequestIidClaim = (projectId: number, iid: number): Claim => ({
  kind: 'merge_request_iid',
  key: `${projectId}/${iid}`,
  conflictMessage: 'Merge request iid has already been taken',
});

export function mergeRequestClaims(event: MergeRequestEvent): ClaimChanges {
  return event.type === 'MergeRequestOpened' ? { acquire: [mergeRequestIidClaim(event.data.project_id, event.data.iid)], release: [] } : NO_CLAIMS;
}
