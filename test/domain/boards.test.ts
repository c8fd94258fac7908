import { describe, expect, it } from 'vitest';
import { type BoardEvent, boardDecider, movedPosition } from '../../src/domain/boards.js';
import { deciderSpec, rejected } from '../support/decider.js';

const board = deciderSpec(boardDecider);
const ID = 7;
const PROJECT = 3;
const ref = { id: ID, project_id: PROJECT };
const created: BoardEvent = { type: 'BoardCreated', data: { ...ref, name: 'Development', backlog_list_id: 100, closed_list_id: 101 } };
const listed = (listId: number, labelId: number, position: number): BoardEvent => ({ type: 'ListCreated', data: { ...ref, list_id: listId, label_id: labelId, position } });
/** Three label lists at 0, 1, 2 (labels 11, 12, 13). */
const three = [created, listed(1, 11, 0), listed(2, 12, 1), listed(3, 13, 2)];
const ALL = [11, 12, 13, 14];

describe('the board decider: boards', () => {
  it('creates a board with the ids of its backlog and closed lists', () => {
    board.on(ID).given().when({ type: 'CreateBoard', projectId: PROJECT, name: 'Development', backlogListId: 100, closedListId: 101 }).then([created]);
  });

  it('updates only what changed, and nothing when nothing did', () => {
    board
      .on(ID)
      .given(created)
      .when({ type: 'UpdateBoard', changes: { name: 'Development', weight: 3, labelIds: [11], milestoneId: -2 } })
      .then([{ type: 'BoardUpdated', data: { ...ref, changes: { weight: 3, label_ids: [11], milestone_id: -2 } } }]);
    board.on(ID).given(created).when({ type: 'UpdateBoard', changes: { name: 'Development', assigneeId: null } }).then([]);
  });

  it('deletes a board; a deleted or unknown board is not found', () => {
    board.on(ID).given(created).when({ type: 'DeleteBoard' }).then([{ type: 'BoardDeleted', data: ref }]);
    board.on(ID).given(created, { type: 'BoardDeleted', data: ref }).when({ type: 'DeleteBoard' }).then(rejected('not_found', { subject: 'Board', record: true }));
    board.on(ID).given().when({ type: 'UpdateBoard', changes: { name: 'x' } }).then(rejected('not_found', { subject: 'Board', record: true }));
  });
});

describe('the board decider: lists (Boards::Lists::*Service)', () => {
  it('puts a new list after the last one, the first at 0', () => {
    board.on(ID).given(created).when({ type: 'CreateList', listId: 1, labelId: 11, existingLabelIds: ALL }).then([listed(1, 11, 0)]);
    board.on(ID).given(...three).when({ type: 'CreateList', listId: 4, labelId: 14, existingLabelIds: ALL }).then([listed(4, 14, 3)]);
  });

  it('refuses a second list of one label (List validates label_id unique per board)', () => {
    board.on(ID).given(...three).when({ type: 'CreateList', listId: 4, labelId: 12, existingLabelIds: ALL }).then(rejected('invalid', { fields: { label_id: ['has already been taken'] } }));
  });

  it('forgets the lists whose label was deleted, without renumbering the others', () => {
    // Label 13 (position 2) is gone: the next list goes after position 1.
    board.on(ID).given(...three).when({ type: 'CreateList', listId: 4, labelId: 14, existingLabelIds: [11, 12, 14] }).then([listed(4, 14, 2)]);
    // Label 11 (position 0) is gone: two lists remain, at 1 and 2; position 2 is out of range.
    const refused = rejected('invalid', { fields: { base: ['List could not be moved!'] } });
    board.on(ID).given(...three).when({ type: 'MoveList', listId: 3, position: 2, existingLabelIds: [12, 13] }).then(refused);
    board.on(ID).given(...three).when({ type: 'MoveList', listId: 3, position: 1, existingLabelIds: [12, 13] }).then([{ type: 'ListMoved', data: { ...ref, list_id: 3, from_position: 2, to_position: 1 } }]);
    board.on(ID).given(...three).when({ type: 'DeleteList', listId: 1, existingLabelIds: [12, 13] }).then(rejected('not_found', { subject: 'List', record: true }));
  });

  it('moves within the movable lists, and refuses the same position or one out of range (MoveService#valid_move?)', () => {
    board.on(ID).given(...three).when({ type: 'MoveList', listId: 1, position: 2, existingLabelIds: ALL }).then([{ type: 'ListMoved', data: { ...ref, list_id: 1, from_position: 0, to_position: 2 } }]);
    const refused = rejected('invalid', { fields: { base: ['List could not be moved!'] } });
    for (const position of [0, -1, 3]) board.on(ID).given(...three).when({ type: 'MoveList', listId: 1, position, existingLabelIds: ALL }).then(refused);
  });

  it('renumbers the lists between the two positions as MoveService does', () => {
    const down = { listId: 1, from: 0, to: 2 };
    expect([0, 1, 2].map((p, i) => movedPosition(p, i + 1, down))).toEqual([2, 0, 1]);
    const up = { listId: 3, from: 2, to: 0 };
    expect([0, 1, 2].map((p, i) => movedPosition(p, i + 1, up))).toEqual([1, 2, 0]);
    // After a move, the list moves back from where the move put it.
    const moved: BoardEvent = { type: 'ListMoved', data: { ...ref, list_id: 1, from_position: 0, to_position: 2 } };
    board.on(ID).given(...three, moved).when({ type: 'MoveList', listId: 1, position: 0, existingLabelIds: ALL }).then([{ type: 'ListMoved', data: { ...ref, list_id: 1, from_position: 2, to_position: 0 } }]);
  });

  it('deletes a list, the lists after it moving up (DestroyService)', () => {
    const deleted: BoardEvent = { type: 'ListDeleted', data: { ...ref, list_id: 2, position: 1 } };
    board.on(ID).given(...three).when({ type: 'DeleteList', listId: 2, existingLabelIds: ALL }).then([deleted]);
    // List 3 is now at 1: moving it to 1 is the same position.
    board.on(ID).given(...three, deleted).when({ type: 'MoveList', listId: 3, position: 1, existingLabelIds: ALL }).then(rejected('invalid', { fields: { base: ['List could not be moved!'] } }));
    board.on(ID).given(...three, deleted).when({ type: 'MoveList', listId: 3, position: 0, existingLabelIds: ALL }).then([{ type: 'ListMoved', data: { ...ref, list_id: 3, from_position: 1, to_position: 0 } }]);
  });
});
