import { describe, expect, it } from 'vitest';
import { issueClaims, issueDecider } from '../../src/domain/issues/decider.js';
import type { IssueEvent } from '../../src/domain/issues/events.js';
import { closingIssueReferences, issueReferences, mergeRequestClosingReferences, referencesIssue } from '../../src/domain/issues/references.js';
import { deciderSpec, rejected } from '../support/decider.js';

const issue = deciderSpec(issueDecider);
const ID = 21;
const ref = { id: ID, project_id: 4, iid: 2 };
const open = (extra: object = {}) => ({ type: 'OpenIssue' as const, projectId: 4, iid: 2, authorId: 1, title: 'Bug', fields: {}, ...extra });
const opened: IssueEvent = {
  type: 'IssueOpened',
  data: {
    ...ref,
    author_id: 1,
    title: 'Bug',
    description: null,
    assignee_ids: [],
    milestone_id: null,
    label_ids: [],
    due_date: null,
    confidential: false,
    discussion_locked: null,
    weight: null,
    created_at: null,
    moved_from_id: null,
  },
};
const closed: IssueEvent = { type: 'IssueClosed', data: { ...ref, title: 'Bug', by_id: 3 } };

describe('the issue decider', () => {
  it('opens an issue with its fields; refuses a blank or long title, a negative weight, a second opening', () => {
    issue.on(ID).given().when(open()).then([opened]);
    issue.on(ID).given().when(open({ fields: { confidential: true, dueDate: '2030-01-01' } })).then([{ ...opened, data: { ...opened.data, confidential: true, due_date: '2030-01-01' } } as IssueEvent]);
    issue.on(ID).given().when(open({ title: ' ' })).then(rejected('invalid', { fields: { title: ["can't be blank"] } }));
    issue.on(ID).given().when(open({ title: 'x'.repeat(256) })).then(rejected('invalid', { fields: { title: ['is too long (maximum is 255 characters)'] } }));
    issue.on(ID).given().when(open({ fields: { weight: -1 } })).then(rejected('invalid', { fields: { weight: ['must be greater than or equal to 0'] } }));
    issue.on(ID).given(opened).when(open()).then(rejected('conflict'));
  });

  it('records only what changed, closes and reopens', () => {
    issue.on(ID).given(opened).when({ type: 'UpdateIssue', fields: { title: 'Bug' }, byId: 3 }).then([]);
    issue
      .on(ID)
      .given(opened)
      .when({ type: 'UpdateIssue', fields: { title: 'Crash', assigneeIds: [5] }, stateEvent: 'close', byId: 3 })
      .then([
        { type: 'IssueUpdated', data: { ...ref, changes: { title: 'Crash', assignee_ids: [5] }, previous: { title: 'Bug', assignee_ids: [] }, updated_at: null } },
        { type: 'IssueClosed', data: { ...ref, title: 'Crash', by_id: 3 } },
      ]);
    issue.on(ID).given(opened, closed).when({ type: 'UpdateIssue', fields: {}, stateEvent: 'close', byId: 3 }).then([]);
    issue.on(ID).given(opened, closed).when({ type: 'UpdateIssue', fields: {}, stateEvent: 'reopen', byId: 3 }).then([{ type: 'IssueReopened', data: { ...ref, title: 'Bug' } }]);
    issue.on(ID).given().when({ type: 'DeleteIssue' }).then(rejected('not_found'));
  });

  it('moves once: closed with moved_to_id, never reopened, not moved again', () => {
    const moved: IssueEvent = { type: 'IssueMoved', data: { ...ref, moved_to_id: 30 } };
    issue.on(ID).given(opened).when({ type: 'MoveIssue', toId: 30, byId: 3 }).then([closed, moved]);
    issue.on(ID).given(opened, closed, moved).when({ type: 'MoveIssue', toId: 31, byId: 3 }).then(rejected('bad_request'));
    issue.on(ID).given(opened, closed, moved).when({ type: 'UpdateIssue', fields: {}, stateEvent: 'reopen', byId: 3 }).then([]);
  });

  it('tracks time and subscriptions as merge requests do (one implementation)', () => {
    issue.on(ID).given(opened).when({ type: 'SetTimeEstimate', seconds: 60 }).then([{ type: 'IssueTimeEstimateChanged', data: { ...ref, time_estimate: 60 } }]);
    issue.on(ID).given(opened).when({ type: 'AddSpentTime', userId: 3, seconds: -1 }).then(rejected('invalid', { fields: { base: ['Time to subtract exceeds the total time spent'] } }));
    const spent: IssueEvent = { type: 'IssueTimeSpent', data: { ...ref, user_id: 3, time_spent: 90, reset: false } };
    issue.on(ID).given(opened).when({ type: 'AddSpentTime', userId: 3, seconds: 90 }).then([spent]);
    issue.on(ID).given(opened, spent).when({ type: 'ResetSpentTime', userId: 3 }).then([{ type: 'IssueTimeSpent', data: { ...ref, user_id: 3, time_spent: -90, reset: true } }]);
    issue.on(ID).given(opened).when({ type: 'Subscribe', userId: 1 }).then(rejected('not_modified'));
    issue.on(ID).given(opened).when({ type: 'Subscribe', userId: 7 }).then([{ type: 'IssueSubscribed', data: { ...ref, user_id: 7 } }]);
    issue.on(ID).given(opened).when({ type: 'Unsubscribe', userId: 1 }).then([{ type: 'IssueUnsubscribed', data: { ...ref, user_id: 1 } }]);
  });

  it('claims the iid in its project when opened', () => {
    expect(issueClaims(opened).acquire.map((c) => [c.kind, c.key])).toEqual([['issue_iid', '4/2']]);
    expect(issueClaims(closed).acquire).toEqual([]);
  });
});

describe('issue references', () => {
  it('finds short, cross-project and URL references; closing ones only in a closing phrase', () => {
    expect(issueReferences('See #1, group/project#2, https://gitlab.example.com/a/b/-/issues/3 and &#4')).toEqual([
      { path: null, iid: 1 },
      { path: 'group/project', iid: 2 },
      { path: 'a/b', iid: 3 },
    ]);
    expect(closingIssueReferences('Closes #1 and #2. Fixes: group/project#3. Mentions #4. Resolved #5, implements #6')).toEqual([
      { path: null, iid: 1 },
      { path: null, iid: 2 },
      { path: 'group/project', iid: 3 },
      { path: null, iid: 5 },
      { path: null, iid: 6 },
    ]);
    expect(closingIssueReferences('closing soon')).toEqual([]);
  });

  it('a merge request closes what its title and description close, into the default branch only (MergeRequest#closes_issues)', () => {
    const mr = { title: 'Fix #1', description: 'Also closes #2', target_branch: 'main' };
    expect(mergeRequestClosingReferences(mr, 'main')).toEqual([
      { path: null, iid: 1 },
      { path: null, iid: 2 },
    ]);
    expect(mergeRequestClosingReferences({ ...mr, description: null }, 'main')).toEqual([{ path: null, iid: 1 }]);
    expect(mergeRequestClosingReferences(mr, 'develop')).toEqual([]);
  });

  it('tells whether references written in a project name an issue: its own, a sibling by name, any by full path', () => {
    const from = { id: 1, path: 'group/app' };
    expect(referencesIssue(issueReferences('See #3'), from, { projectId: 1, path: 'group/app', iid: 3 })).toBe(true);
    expect(referencesIssue(issueReferences('See #3'), from, { projectId: 2, path: 'group/lib', iid: 3 })).toBe(false);
    expect(referencesIssue(issueReferences('See lib#3'), from, { projectId: 2, path: 'group/lib', iid: 3 })).toBe(true);
    expect(referencesIssue(issueReferences('See Group/Lib#3'), from, { projectId: 2, path: 'group/lib', iid: 3 })).toBe(true);
    expect(referencesIssue(issueReferences('See other/lib#3'), from, { projectId: 2, path: 'group/lib', iid: 3 })).toBe(false);
    expect(referencesIssue(issueReferences('See #30'), from, { projectId: 1, path: 'group/app', iid: 3 })).toBe(false);
  });
});

describe('the issue decider and epics (EE EpicIssue)', () => {
  const placement = (epicId: number, relativePosition = 500) => ({ epicId, epicGroupId: 9, newLinkId: 70, relativePosition });
  const added = (epicId: number, previous: number | null, linkId = 70, position = 500): IssueEvent => ({
    type: 'IssueAddedToEpic',
    data: { ...ref, epic_issue_id: linkId, epic_id: epicId, epic_group_id: 9, relative_position: position, previous_epic_id: previous },
  });
  const update = (epic: ReturnType<typeof placement> | null) => ({ type: 'UpdateIssue' as const, fields: {}, byId: 1, epic });

  it('opens an issue in an epic: IssueOpened then IssueAddedToEpic', () => {
    issue.on(ID).given().when(open({ epic: placement(5) })).then([opened, added(5, null)]);
  });

  it('adds, moves with the same link, refuses the same epic twice (409), repositions and removes', () => {
    issue.on(ID).given(opened).when({ type: 'AddIssueToEpic', ...placement(5) }).then([added(5, null)]);
    issue.on(ID).given(opened, added(5, null)).when({ type: 'AddIssueToEpic', ...placement(6, 100), newLinkId: 99 }).then([added(6, 5, 70, 100)]);
    issue.on(ID).given(opened, added(5, null)).when({ type: 'AddIssueToEpic', ...placement(5) }).then(rejected('conflict'));
    issue.on(ID).given(opened, added(5, null)).when({ type: 'ChangeEpicPosition', epicId: 5, relativePosition: 1 }).then([
      { type: 'IssueEpicPositionChanged', data: { ...ref, epic_issue_id: 70, epic_id: 5, relative_position: 1 } },
    ]);
    issue.on(ID).given(opened, added(5, null)).when({ type: 'ChangeEpicPosition', epicId: 5, relativePosition: 500 }).then([]);
    issue.on(ID).given(opened, added(5, null)).when({ type: 'ChangeEpicPosition', epicId: 6, relativePosition: 1 }).then(rejected('not_found'));
    issue.on(ID).given(opened, added(5, null)).when({ type: 'RemoveIssueFromEpic', epicId: 5 }).then([{ type: 'IssueRemovedFromEpic', data: { ...ref, epic_issue_id: 70, epic_id: 5 } }]);
    issue.on(ID).given(opened).when({ type: 'RemoveIssueFromEpic', epicId: 5 }).then(rejected('not_found'));
    issue.on(ID).given().when({ type: 'AddIssueToEpic', ...placement(5) }).then(rejected('not_found'));
  });

  it("an update's epic links, keeps, moves or (null) unlinks, without an error for the same epic", () => {
    issue.on(ID).given(opened).when(update(placement(5))).then([added(5, null)]);
    issue.on(ID).given(opened, added(5, null)).when(update(placement(5))).then([]);
    issue.on(ID).given(opened, added(5, null)).when(update(placement(6))).then([added(6, 5)]);
    issue.on(ID).given(opened, added(5, null)).when(update(null)).then([{ type: 'IssueRemovedFromEpic', data: { ...ref, epic_issue_id: 70, epic_id: 5 } }]);
    issue.on(ID).given(opened).when(update(null)).then([]);
  });
});
