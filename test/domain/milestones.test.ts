import { describe, expect, it } from 'vitest';
import { type MilestoneEvent, milestoneClaims, milestoneDecider } from '../../src/domain/milestones.js';
import { deciderSpec, rejected } from '../support/decider.js';

const milestone = deciderSpec(milestoneDecider);
const ID = 7;
const PROJECT = 3;
const ref = { id: ID, project_id: PROJECT, iid: 2 };
const created: MilestoneEvent = { type: 'MilestoneCreated', data: { ...ref, title: 'v1.0', description: null, start_date: null, due_date: null } };
const closed: MilestoneEvent = { type: 'MilestoneClosed', data: { ...ref, title: 'v1.0' } };
const create = (extra: object = {}) => ({ type: 'CreateMilestone' as const, projectId: PROJECT, iid: 2, title: 'v1.0', fields: {}, ...extra });
const update = (fields: object, stateEvent?: 'close' | 'activate') => ({ type: 'UpdateMilestone' as const, fields, stateEvent });

describe('the milestone decider', () => {
  it('creates with its iid and a stripped title', () => {
    milestone.on(ID).given().when(create()).then([created]);
    milestone.on(ID).given().when(create({ title: '  v1.0 ', fields: { startDate: '2020-01-01', dueDate: '2020-01-02', description: 'd' } })).then([
      { type: 'MilestoneCreated', data: { ...created.data, description: 'd', start_date: '2020-01-01', due_date: '2020-01-02' } },
    ]);
  });

  it("validates as GitLab's Milestone does: a title, and a due date after the start date", () => {
    milestone.on(ID).given().when(create({ title: ' ' })).then(rejected('invalid', { fields: { title: ["can't be blank"] } }));
    milestone.on(ID).given().when(create({ title: 'x'.repeat(256) })).then(rejected('invalid', { fields: { title: ['is too long (maximum is 255 characters)'] } }));
    const dates = rejected('invalid', { fields: { due_date: ['must be greater than start date'] } });
    milestone.on(ID).given().when(create({ fields: { startDate: '2020-01-02', dueDate: '2020-01-02' } })).then(dates);
    milestone.on(ID).given(created).when(update({ startDate: '2020-03-01' })).then([{ type: 'MilestoneUpdated', data: { ...ref, changes: { start_date: '2020-03-01' } } }]);
    milestone
      .on(ID)
      .given(created, { type: 'MilestoneUpdated', data: { ...ref, changes: { due_date: '2020-02-01' } } })
      .when(update({ startDate: '2020-03-01' }, 'close'))
      .then(dates);
  });

  it('updates only what changed, and closes or activates only from the other state', () => {
    milestone.on(ID).given(created).when(update({ title: ' v1.0', description: null })).then([]);
    milestone.on(ID).given(created).when(update({}, 'activate')).then([]);
    milestone.on(ID).given(created, closed).when(update({}, 'close')).then([]);
    milestone.on(ID).given(created).when(update({ title: 'v2' }, 'close')).then([
      { type: 'MilestoneUpdated', data: { ...ref, changes: { title: 'v2' } } },
      { type: 'MilestoneClosed', data: { ...ref, title: 'v2' } },
    ]);
    milestone.on(ID).given(created, closed).when(update({}, 'activate')).then([{ type: 'MilestoneReopened', data: { ...ref, title: 'v1.0' } }]);
  });

  it('deletes, and knows no milestone afterwards', () => {
    milestone.on(ID).given(created).when({ type: 'DeleteMilestone' }).then([{ type: 'MilestoneDeleted', data: { ...ref, title: 'v1.0' } }]);
    milestone.on(ID).given(created, { type: 'MilestoneDeleted', data: { ...ref, title: 'v1.0' } }).when(update({ title: 'x' })).then(rejected('not_found'));
  });
});

describe('milestone claims', () => {
  const state = { id: ID, milestone: { projectId: PROJECT, iid: 2, title: 'v1.0', description: null, startDate: null, dueDate: null, state: 'active' as const } };
  it('holds the iid for good and the title while it is the milestone\'s', () => {
    expect(milestoneClaims(created, { id: ID, milestone: null }).acquire.map((c) => `${c.kind} ${c.key}`)).toEqual(['milestone_iid 3/2', 'milestone_title 3/v1.0']);
    const renamed = milestoneClaims({ type: 'MilestoneUpdated', data: { ...ref, changes: { title: 'v2' } } }, state);
    expect([renamed.acquire.map((c) => c.key), renamed.release.map((c) => c.key)]).toEqual([['3/v2'], ['3/v1.0']]);
    const deleted = milestoneClaims({ type: 'MilestoneDeleted', data: { ...ref, title: 'v1.0' } }, state);
    expect(deleted.release.map((c) => `${c.kind} ${c.key}`)).toEqual(['milestone_title 3/v1.0']);
  });
});
