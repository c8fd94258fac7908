import { describe, expect, it } from 'vitest';
import { type EpicEvent, compositeDates, epicClaims, epicDecider, inheritedDates, labelList } from '../../src/domain/epics.js';
import { todoDecider, type TodoCommand, type TodoEvent } from '../../src/domain/todos.js';
import { deciderSpec, rejected } from '../support/decider.js';

const epic = deciderSpec(epicDecider);
const ID = 7;
const GROUP = 3;
const ref = { id: ID, group_id: GROUP, iid: 2 };
const created: EpicEvent = {
  type: 'EpicCreated',
  data: { ...ref, parent_id: null, author_id: 1, title: 'Roadmap', description: null, labels: [], start_date_is_fixed: false, start_date_fixed: null, due_date_is_fixed: false, due_date_fixed: null },
};
const create = (extra: object = {}) => ({ type: 'CreateEpic' as const, groupId: GROUP, iid: 2, authorId: 1, title: 'Roadmap', fields: {}, ...extra });

describe('the epic decider', () => {
  it('creates with its iid, labels as a sorted list and dates not fixed unless asked', () => {
    epic.on(ID).given().when(create()).then([created]);
    epic.on(ID).given().when(create({ fields: { labels: ' b,a,,b ', dueDateFixed: '2020-01-01', dueDateIsFixed: true } })).then([
      { type: 'EpicCreated', data: { ...created.data, labels: ['a', 'b'], due_date_fixed: '2020-01-01', due_date_is_fixed: true } },
    ]);
  });

  it('validates the title and the description length', () => {
    epic.on(ID).given().when(create({ title: '' })).then(rejected('invalid', { fields: { title: ["can't be blank"] } }));
    epic.on(ID).given().when(create({ fields: { description: 'x'.repeat(1_048_577) } })).then(rejected('invalid', { fields: { description: ['is too long (maximum is 1048576 characters)'] } }));
  });

  it("accepts a parent whose group's subtree holds the epic's group, within the depth limit", () => {
    const parent = { id: 5, groupSubtree: [1, GROUP], chainLength: 1 };
    epic.on(ID).given().when(create({ parentId: 5, parent })).then([{ type: 'EpicCreated', data: { ...created.data, parent_id: 5 } }]);
    const notValid = rejected('invalid', { fields: { parent: ['The parent is not valid'] } });
    epic.on(ID).given().when(create({ parentId: 5, parent: { ...parent, groupSubtree: [9] } })).then(notValid);
    epic.on(ID).given().when(create({ parentId: 5, parent: null })).then(notValid);
    epic.on(ID).given().when(create({ parentId: 5, parent: { ...parent, chainLength: 3 } })).then([{ type: 'EpicCreated', data: { ...created.data, parent_id: 5 } }]);
    epic.on(ID).given().when(create({ parentId: 5, parent: { ...parent, chainLength: 4 } })).then(notValid);
  });

  it('updates only what changed, and closes or reopens only from the other state', () => {
    epic.on(ID).given(created).when({ type: 'UpdateEpic', fields: { title: 'Roadmap', labels: '' } }).then([]);
    epic.on(ID).given(created).when({ type: 'UpdateEpic', fields: { title: 'New' }, stateEvent: 'close' }).then([
      { type: 'EpicUpdated', data: { ...ref, changes: { title: 'New' } } },
      { type: 'EpicClosed', data: { ...ref, title: 'New' } },
    ]);
    epic.on(ID).given(created).when({ type: 'UpdateEpic', fields: {}, stateEvent: 'reopen' }).then([]);
    const closed: EpicEvent = { type: 'EpicClosed', data: { ...ref, title: 'Roadmap' } };
    epic.on(ID).given(created, closed).when({ type: 'UpdateEpic', fields: {}, stateEvent: 'close' }).then([]);
    epic.on(ID).given(created, closed).when({ type: 'UpdateEpic', fields: {}, stateEvent: 'reopen' }).then([{ type: 'EpicReopened', data: { ...ref, title: 'Roadmap' } }]);
  });

  it('deletes; a deleted epic is not found', () => {
    const deleted: EpicEvent = { type: 'EpicDeleted', data: ref };
    epic.on(ID).given(created).when({ type: 'DeleteEpic' }).then([deleted]);
    epic.on(ID).given(created, deleted).when({ type: 'UpdateEpic', fields: { title: 'x' } }).then(rejected('not_found'));
  });

  it("claims the group's iid for good", () => {
    expect(epicClaims(created)).toEqual({ acquire: [expect.objectContaining({ kind: 'epic_iid', key: `${GROUP}/2` })], release: [] });
    expect(epicClaims({ type: 'EpicDeleted', data: ref })).toEqual({ acquire: [], release: [] });
  });
});

describe('epic dates', () => {
  it('inherit the earliest start and the latest due date of the sources, milestones among them', () => {
    expect(inheritedDates([])).toEqual({ startDate: null, dueDate: null });
    expect(inheritedDates([{ startDate: '2020-03-01', dueDate: null }, { startDate: '2020-02-01', dueDate: '2020-04-01' }])).toEqual({ startDate: '2020-02-01', dueDate: '2020-04-01' });
    expect(inheritedDates([{ startDate: '2020-03-01', dueDate: '2020-04-01' }], [{ startDate: '2019-12-01', dueDate: '2021-01-01' }])).toEqual({ startDate: '2019-12-01', dueDate: '2021-01-01' });
  });

  it('are the fixed ones when fixed (even none), the inherited ones otherwise', () => {
    const inherited = { startDate: '2020-01-01', dueDate: '2020-02-01' };
    expect(compositeDates({ startDateIsFixed: true, startDateFixed: null, dueDateIsFixed: false, dueDateFixed: '2030-01-01' }, inherited)).toEqual({ startDate: null, dueDate: '2020-02-01' });
  });

  it('labels: a comma list, trimmed, each once, sorted', () => {
    expect(labelList('b, a ,,b')).toEqual(['a', 'b']);
  });
});

describe('the todos decider', () => {
  const todos = deciderSpec(todoDecider);
  const USER = 4;
  const markEpic = (id: number): TodoCommand => ({ type: 'MarkTodo', id, authorId: USER, targetType: 'Epic', targetId: 70, projectId: null, groupId: GROUP });
  const createdTodo = (id: number): TodoEvent => ({
    type: 'TodoCreated',
    data: { id, user_id: USER, author_id: USER, action: 'marked', target_type: 'Epic', target_id: 70, project_id: null, group_id: GROUP },
  });

  it('marks a todo; the same pending one again is not modified; a done one can be marked anew', () => {
    todos.on(USER).given().when(markEpic(1)).then([createdTodo(1)]);
    todos.on(USER).given(createdTodo(1)).when(markEpic(2)).then(rejected('not_modified'));
    const done: TodoEvent = { type: 'TodosMarkedDone', data: { user_id: USER, ids: [1] } };
    todos.on(USER).given(createdTodo(1), done).when(markEpic(2)).then([createdTodo(2)]);
  });

  it('marks done the pending ones only, each once', () => {
    const done: TodoEvent = { type: 'TodosMarkedDone', data: { user_id: USER, ids: [1] } };
    todos.on(USER).given(createdTodo(1), createdTodo(2)).when({ type: 'MarkTodosDone', ids: [2, 1, 2, 99] }).then([{ type: 'TodosMarkedDone', data: { user_id: USER, ids: [1, 2] } }]);
    todos.on(USER).given(createdTodo(1), done).when({ type: 'MarkTodosDone', ids: [1] }).then([]);
  });
});
