import { describe, expect, it } from 'vitest';
import { isSubscribed, mergeRequestClaims, mergeRequestDecider } from '../../src/domain/merge-requests/decider.js';
import type { MergeRequestEvent, VersionData } from '../../src/domain/merge-requests/events.js';
import { deciderSpec, rejected } from '../support/decider.js';

const mr = deciderSpec(mergeRequestDecider);
const ID = 11;
const PROJECT = 4;
const ref = { id: ID, project_id: PROJECT, iid: 3 };
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const version: VersionData = { version_id: 1, head_commit_sha: A, base_commit_sha: B, start_commit_sha: B, commit_shas: [A], files_count: 1 };
const branches = { sourceExists: true, targetExists: true, openDuplicateIid: null };
const open = (extra: object = {}) => ({
  type: 'OpenMergeRequest' as const,
  projectId: PROJECT,
  sourceProjectId: PROJECT,
  iid: 3,
  authorId: 1,
  title: 'Fix',
  sourceBranch: 'fix',
  targetBranch: 'master',
  fields: {},
  branches,
  version,
  ...extra,
});
const opened: MergeRequestEvent = {
  type: 'MergeRequestOpened',
  data: {
    ...ref,
    author_id: 1,
    source_project_id: PROJECT,
    source_branch: 'fix',
    title: 'Fix',
    description: null,
    target_branch: 'master',
    assignee_ids: [],
    milestone_id: null,
    label_ids: [],
    discussion_locked: null,
    squash: false,
    force_remove_source_branch: false,
    allow_collaboration: false,
    version,
  },
};
const closed: MergeRequestEvent = { type: 'MergeRequestClosed', data: { ...ref, title: 'Fix', by_id: 2 } };
const merged: MergeRequestEvent = { type: 'MergeRequestMerged', data: { ...ref, title: 'Fix', by_id: 2, merge_commit_sha: C, squash_commit_sha: null } };
const update = (extra: object = {}) => ({ type: 'UpdateMergeRequest' as const, fields: {}, byId: 2, branches, ...extra });

describe('the merge request decider', () => {
  it('records the merge status the opening checked, of its first version’s heads, with the opening', () => {
    mr.on(ID)
      .given()
      .when(open({ mergeStatus: 'cannot_be_merged' }))
      .then([opened, { type: 'MergeRequestMergeStatusChecked', data: { ...ref, merge_status: 'cannot_be_merged', source_sha: A, target_sha: B } }]);
  });

  it('opens with its iid, its first version and GitLab’s defaults', () => {
    mr.on(ID).given().when(open()).then([opened]);
    mr.on(ID)
      .given()
      .when(open({ fields: { description: 'd', assigneeIds: [5, 3], labelIds: [9], milestoneId: 2, squash: true, forceRemoveSourceBranch: true } }))
      .then([{ type: 'MergeRequestOpened', data: { ...opened.data, description: 'd', assignee_ids: [5, 3], label_ids: [9], milestone_id: 2, squash: true, force_remove_source_branch: true } }]);
  });

  it('refuses what MergeRequest#validate_branches refuses, and a bad title', () => {
    mr.on(ID).given().when(open({ targetBranch: 'fix' })).then(rejected('unprocessable', { messages: ["You can't use same project/branch for source and target"] }));
    mr.on(ID)
      .given()
      .when(open({ branches: { ...branches, openDuplicateIid: 1 } }))
      .then(rejected('conflict', { messages: ['Another open merge request already exists for this source branch: !1'] }));
    mr.on(ID)
      .given()
      .when(open({ branches: { sourceExists: false, targetExists: false, openDuplicateIid: null }, version: null }))
      .then(rejected('invalid', { fields: { source_branch: ['does not exist'], target_branch: ['does not exist'] } }));
    mr.on(ID).given().when(open({ title: ' ' })).then(rejected('invalid', { fields: { title: ["can't be blank"] } }));
    mr.on(ID).given(opened).when(open()).then(rejected('conflict'));
  });

  it('opens from a fork: the source project is the fork, and the same branch name on both sides is no conflict', () => {
    const fromFork = { ...opened.data, source_project_id: 77, source_branch: 'master' };
    mr.on(ID).given().when(open({ sourceProjectId: 77, sourceBranch: 'master' })).then([{ type: 'MergeRequestOpened', data: fromFork }]);
    // Retargeting a fork's merge request to the branch of the same name is no conflict either.
    mr.on(ID)
      .given({ type: 'MergeRequestOpened', data: { ...fromFork, target_branch: 'develop' } })
      .when(update({ fields: { targetBranch: 'master' } }))
      .then([{ type: 'MergeRequestUpdated', data: { ...ref, changes: { target_branch: 'master' }, previous: {} } }]);
  });

  it('updates only what changed; closes, reopens (checking the branches again) and never reopens a merged one', () => {
    mr.on(ID).given(opened).when(update({ fields: { title: 'Fix', labelIds: [] } })).then([]);
    mr.on(ID).given(opened).when(update({ fields: { title: 'Fix it', assigneeIds: [7] } })).then([{ type: 'MergeRequestUpdated', data: { ...ref, changes: { title: 'Fix it', assignee_ids: [7] }, previous: { title: 'Fix', assignee_ids: [] } } }]);
    mr.on(ID).given(opened).when(update({ stateEvent: 'close' })).then([closed]);
    mr.on(ID).given(opened, closed).when(update({ stateEvent: 'close' })).then([]);
    mr.on(ID).given(opened, closed).when(update({ stateEvent: 'reopen' })).then([{ type: 'MergeRequestReopened', data: { ...ref, title: 'Fix' } }]);
    mr.on(ID)
      .given(opened, closed)
      .when(update({ stateEvent: 'reopen', branches: { ...branches, openDuplicateIid: 9 } }))
      .then(rejected('conflict', { messages: ['Another open merge request already exists for this source branch: !9'] }));
    mr.on(ID).given(opened, merged).when(update({ stateEvent: 'reopen' })).then([]);
    mr.on(ID).given(opened, merged).when(update({ stateEvent: 'close' })).then([]);
    mr.on(ID).given(opened).when(update({ fields: { targetBranch: 'fix' } })).then(rejected('unprocessable', { messages: ["You can't use same project/branch for source and target"] }));
  });

  it('a new target branch of an open merge request records the version taken against it; a closed one keeps its versions', () => {
    const retargeted: VersionData = { ...version, version_id: 2, start_commit_sha: C, base_commit_sha: C };
    mr.on(ID)
      .given(opened)
      .when(update({ fields: { targetBranch: 'develop' }, version: retargeted }))
      .then([
        { type: 'MergeRequestUpdated', data: { ...ref, changes: { target_branch: 'develop' }, previous: {} } },
        { type: 'MergeRequestVersionRecorded', data: { ...ref, version: retargeted } },
      ]);
    mr.on(ID)
      .given(opened, closed)
      .when(update({ fields: { targetBranch: 'develop' }, version: retargeted }))
      .then([{ type: 'MergeRequestUpdated', data: { ...ref, changes: { target_branch: 'develop' }, previous: {} } }]);
    mr.on(ID).given(opened).when(update({ fields: { title: 'Other' }, version: retargeted })).then([{ type: 'MergeRequestUpdated', data: { ...ref, changes: { title: 'Other' }, previous: { title: 'Fix' } } }]);
  });

  it('merges an open merge request only: 405 otherwise, 406 on conflicts, 409 when the head moved', () => {
    const merge = { type: 'MergeMergeRequest' as const, byId: 2, merge: { mergeCommitSha: C, squashCommitSha: null } };
    mr.on(ID).given(opened).when(merge).then([merged]);
    mr.on(ID).given(opened, closed).when(merge).then(rejected('not_allowed'));
    mr.on(ID).given(opened, merged).when(merge).then(rejected('not_allowed'));
    mr.on(ID).given(opened).when({ ...merge, merge: null }).then(rejected('not_acceptable', { text: 'Branch cannot be merged' }));
    mr.on(ID).given(opened).when({ ...merge, expectedSha: B }).then(rejected('conflict', { text: `SHA does not match HEAD of source branch: ${A}` }));
    // MergeRequest#mergeable_state?: a work in progress, a missing branch, no commits, conflicts already found; merge_when_pipeline_succeeds without a pipeline.
    const wip: MergeRequestEvent = { type: 'MergeRequestUpdated', data: { ...ref, changes: { title: 'WIP: Fix' }, previous: { title: 'Fix' } } };
    mr.on(ID).given(opened, wip).when(merge).then(rejected('not_allowed'));
    mr.on(ID).given(opened).when({ ...merge, branchesExist: false }).then(rejected('not_allowed'));
    mr.on(ID).given(opened).when({ ...merge, whenPipelineSucceeds: true }).then(rejected('not_allowed'));
    const checked: MergeRequestEvent = { type: 'MergeRequestMergeStatusChecked', data: { ...ref, merge_status: 'cannot_be_merged', source_sha: A, target_sha: B } };
    mr.on(ID).given(opened, checked).when({ ...merge, merge: null }).then(rejected('not_allowed'));
    mr.on(ID).given(opened, checked).when(merge).then([merged]);
    mr.on(ID).given(opened).when({ ...merge, merge: null, expectedSha: B }).then(rejected('not_acceptable', { text: 'Branch cannot be merged' }));
    mr.on(ID).given().when(merge).then(rejected('not_found'));
  });

  it('tracks time: estimates, spent time that may subtract but not below zero, resets', () => {
    mr.on(ID).given(opened).when({ type: 'SetTimeEstimate', seconds: 3600 }).then([{ type: 'MergeRequestTimeEstimateChanged', data: { ...ref, time_estimate: 3600 } }]);
    const spent: MergeRequestEvent = { type: 'MergeRequestTimeSpent', data: { ...ref, user_id: 1, time_spent: 3600, reset: false } };
    mr.on(ID).given(opened).when({ type: 'AddSpentTime', userId: 1, seconds: 3600 }).then([spent]);
    mr.on(ID).given(opened, spent).when({ type: 'AddSpentTime', userId: 1, seconds: -3601 }).then(rejected('invalid', { fields: { base: ['Time to subtract exceeds the total time spent'] } }));
    mr.on(ID).given(opened, spent).when({ type: 'ResetSpentTime', userId: 2 }).then([{ type: 'MergeRequestTimeSpent', data: { ...ref, user_id: 2, time_spent: -3600, reset: true } }]);
    mr.on(ID).given(opened).when({ type: 'ResetSpentTime', userId: 2 }).then([]);
  });

  it('subscribes authors and assignees implicitly; explicit (un)subscriptions answer 304 when nothing changes', () => {
    mr.on(ID).given(opened).when({ type: 'Subscribe', userId: 1 }).then(rejected('not_modified'));
    mr.on(ID).given(opened).when({ type: 'Unsubscribe', userId: 5 }).then(rejected('not_modified'));
    mr.on(ID).given(opened).when({ type: 'Subscribe', userId: 5 }).then([{ type: 'MergeRequestSubscribed', data: { ...ref, user_id: 5 } }]);
    mr.on(ID).given(opened).when({ type: 'Unsubscribe', userId: 1 }).then([{ type: 'MergeRequestUnsubscribed', data: { ...ref, user_id: 1 } }]);
    const state = [opened, { type: 'MergeRequestUnsubscribed', data: { ...ref, user_id: 1 } } as MergeRequestEvent].reduce(mergeRequestDecider.evolve, mergeRequestDecider.initialState(ID));
    expect(isSubscribed(state.mergeRequest!, 1)).toBe(false);
  });

  it('records a new version when the source head moves, and a merge status only for the current head', () => {
    const next = { ...version, version_id: 2, head_commit_sha: C, commit_shas: [C, A] };
    mr.on(ID).given(opened).when({ type: 'RecordVersion', version: next }).then([{ type: 'MergeRequestVersionRecorded', data: { ...ref, version: next } }]);
    mr.on(ID).given(opened).when({ type: 'RecordVersion', version }).then([]);
    mr.on(ID).given(opened).when({ type: 'RecordMergeStatus', mergeStatus: 'can_be_merged', sourceSha: A, targetSha: B }).then([
      { type: 'MergeRequestMergeStatusChecked', data: { ...ref, merge_status: 'can_be_merged', source_sha: A, target_sha: B } },
    ]);
    mr.on(ID).given(opened).when({ type: 'RecordMergeStatus', mergeStatus: 'can_be_merged', sourceSha: C, targetSha: B }).then([]);
  });

  it('is merged by a push that brought its current head in, once, and not when its diff is empty', () => {
    const byPush = { type: 'RecordMergedByPush' as const, byId: 2, headSha: A, mergeCommitSha: C };
    mr.on(ID).given(opened).when(byPush).then([merged]);
    mr.on(ID).given(opened).when({ ...byPush, headSha: B }).then([]);
    mr.on(ID).given(opened, merged).when(byPush).then([]);
    mr.on(ID).given(opened, closed).when(byPush).then([]);
    const empty = { ...version, commit_shas: [] };
    mr.on(ID).given({ ...opened, data: { ...opened.data, version: empty } } as MergeRequestEvent).when(byPush).then([]);
  });

  it('claims the iid of its project once', () => {
    expect(mergeRequestClaims(opened).acquire).toEqual([{ kind: 'merge_request_iid', key: `${PROJECT}/3`, conflictMessage: 'Merge request iid has already been taken' }]);
    expect(mergeRequestClaims(closed)).toEqual({ acquire: [], release: [] });
  });
});
