import { z } from 'zod';
import { type Decider, unhandled } from './decider.js';
import { invalid, recordNotFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { defineAggregate } from './aggregate.js';

/**
 * Issue boards of a project (GitLab 12.10's `Board` and its `List`s): one aggregate per board,
 * stream `board-<id>`, its lists inside it, since moving or removing one list renumbers the
 * others (Boards::Lists::MoveService, DestroyService). A board is made with its backlog and
 * closed lists (Boards::CreateService), which the API never shows; the label lists are the
 * ones it shows, moves and removes.
 *
 * A list goes with its label (GitLab's `lists.label_id` foreign key is `on delete cascade`,
 * and nothing renumbers the others): the label is another aggregate, so each list command
 * carries which of the board's labels still exist, read in the write transaction, and the
 * decider ignores the lists of the others.
 */

// ───────────────────────────── Events ─────────────────────────────

const ofBoard = { id: z.int(), project_id: z.int() };

/** The scope of a board (EE's configurable boards): a milestone, an assignee, labels, a weight. */
const scopeChanges = {
  milestone_id: z.int().nullable().optional(),
  assignee_id: z.int().nullable().optional(),
  label_ids: z.array(z.int()).optional(),
  weight: z.int().nullable().optional(),
};

export const boardEvents = {
  BoardCreated: z.strictObject({ ...ofBoard, name: z.string(), backlog_list_id: z.int(), closed_list_id: z.int() }),
  BoardUpdated: z.strictObject({ ...ofBoard, changes: z.strictObject({ name: z.string().optional(), ...scopeChanges }) }),
  BoardDeleted: z.strictObject(ofBoard),
  ListCreated: z.strictObject({ ...ofBoard, list_id: z.int(), label_id: z.int(), position: z.int() }),
  ListMoved: z.strictObject({ ...ofBoard, list_id: z.int(), from_position: z.int(), to_position: z.int() }),
  ListDeleted: z.strictObject({ ...ofBoard, list_id: z.int(), position: z.int() }),
} satisfies EventSchemas;

export type BoardEvent = EventOf<typeof boardEvents>;

export const boardStreamId = (id: number) => `board-${id}`;

export const boardEventIndex = (event: BoardEvent): FeedIndex => ({ projectId: event.data.project_id, targetType: 'Board', targetId: event.data.id });

// ───────────────────────────── State ─────────────────────────────

/** A label list (list_type `label`): the only kind the API shows and moves here. */
export interface ListRecord {
  readonly id: number;
  readonly labelId: number;
  readonly position: number;
}

export interface BoardScope {
  readonly milestoneId: number | null;
  readonly assigneeId: number | null;
  readonly labelIds: readonly number[];
  readonly weight: number | null;
}

export interface BoardRecord extends BoardScope {
  readonly projectId: number;
  readonly name: string;
  /** Every label list created and not removed, including those whose label was deleted since. */
  readonly lists: readonly ListRecord[];
}

export interface BoardState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly board: BoardRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** What an update sets; undefined leaves a field as it is. */
export interface BoardChanges {
  readonly name?: string | undefined;
  readonly milestoneId?: number | null | undefined;
  readonly assigneeId?: number | null | undefined;
  readonly labelIds?: readonly number[] | undefined;
  readonly weight?: number | null | undefined;
}

/** The ids of the labels, among those the board's lists name, that still exist. */
type ExistingLabels = { readonly existingLabelIds: readonly number[] };

export type BoardCommand =
  | { readonly type: 'CreateBoard'; readonly projectId: number; readonly name: string; readonly backlogListId: number; readonly closedListId: number }
  | { readonly type: 'UpdateBoard'; readonly changes: BoardChanges }
  | { readonly type: 'DeleteBoard' }
  | ({ readonly type: 'CreateList'; readonly listId: number; readonly labelId: number } & ExistingLabels)
  | ({ readonly type: 'MoveList'; readonly listId: number; readonly position: number } & ExistingLabels)
  | ({ readonly type: 'DeleteList'; readonly listId: number } & ExistingLabels);

// ───────────────────────────── Rules ─────────────────────────────

/** The lists of the board as GitLab has them: those whose label still exists. */
export const liveLists = (board: BoardRecord, existingLabelIds: readonly number[]) => board.lists.filter((list) => existingLabelIds.includes(list.labelId));

/** Lists::MoveService#reorder_intermediate_lists and #update_list_position, on one list's position. */
export function movedPosition(position: number, listId: number, moved: { listId: number; from: number; to: number }): number {
  if (listId === moved.listId) return moved.to;
  if (moved.from < moved.to) return position > moved.from && position <= moved.to ? position - 1 : position;
  return position >= moved.to && position < moved.from ? position + 1 : position;
}

/** `render_api_error!({ error: … }, 400)`: a refusal that is not a field's, as GitLab renders it on this API. */
const refusedBy = (message: string) => invalid({ base: [message] });

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: BoardState, event: BoardEvent): BoardState {
  const { board } = state;
  switch (event.type) {
    case 'BoardCreated':
      return { ...state, board: { projectId: event.data.project_id, name: event.data.name, milestoneId: null, assigneeId: null, labelIds: [], weight: null, lists: [] } };
    case 'BoardUpdated': {
      if (!board) return state;
      const { name, milestone_id, assignee_id, label_ids, weight } = event.data.changes;
      return {
        ...state,
        board: {
          ...board,
          ...(name !== undefined ? { name } : {}),
          ...(milestone_id !== undefined ? { milestoneId: milestone_id } : {}),
          ...(assignee_id !== undefined ? { assigneeId: assignee_id } : {}),
          ...(label_ids !== undefined ? { labelIds: label_ids } : {}),
          ...(weight !== undefined ? { weight } : {}),
        },
      };
    }
    case 'BoardDeleted':
      return { ...state, board: null };
    case 'ListCreated':
      if (!board) return state;
      return { ...state, board: { ...board, lists: [...board.lists, { id: event.data.list_id, labelId: event.data.label_id, position: event.data.position }] } };
    case 'ListMoved': {
      if (!board) return state;
      const moved = { listId: event.data.list_id, from: event.data.from_position, to: event.data.to_position };
      return { ...state, board: { ...board, lists: board.lists.map((list) => ({ ...list, position: movedPosition(list.position, list.id, moved) })) } };
    }
    case 'ListDeleted': {
      if (!board) return state;
      const { list_id, position } = event.data;
      const lists = board.lists.filter((list) => list.id !== list_id).map((list) => (list.position > position ? { ...list, position: list.position - 1 } : list));
      return { ...state, board: { ...board, lists } };
    }
    default:
      return unhandled(event);
  }
}

function decide(command: BoardCommand, state: BoardState): BoardEvent[] {
  const { id, board } = state;
  if (command.type === 'CreateBoard') {
    // A new id each time: a second create on the stream is a defect of the caller.
    if (board) throw new Error(`board ${id} exists`);
    const { projectId, name, backlogListId, closedListId } = command;
    return [{ type: 'BoardCreated', data: { id, project_id: projectId, name, backlog_list_id: backlogListId, closed_list_id: closedListId } }];
  }
  if (!board) throw recordNotFound('Board');
  const ref = { id, project_id: board.projectId };
  switch (command.type) {
    case 'UpdateBoard': {
      const c = command.changes;
      const changes = {
        ...(c.name !== undefined && c.name !== board.name ? { name: c.name } : {}),
        ...(c.milestoneId !== undefined && c.milestoneId !== board.milestoneId ? { milestone_id: c.milestoneId } : {}),
        ...(c.assigneeId !== undefined && c.assigneeId !== board.assigneeId ? { assignee_id: c.assigneeId } : {}),
        ...(c.labelIds !== undefined && c.labelIds.join() !== board.labelIds.join() ? { label_ids: [...c.labelIds] } : {}),
        ...(c.weight !== undefined && c.weight !== board.weight ? { weight: c.weight } : {}),
      };
      return Object.keys(changes).length === 0 ? [] : [{ type: 'BoardUpdated', data: { ...ref, changes } }];
    }
    case 'DeleteBoard':
      return [{ type: 'BoardDeleted', data: ref }];
    case 'CreateList': {
      const lists = liveLists(board, command.existingLabelIds);
      // List `validates :label_id, uniqueness: { scope: :board_id }`.
      if (lists.some((list) => list.labelId === command.labelId)) throw invalid({ label_id: ['has already been taken'] });
      // Lists::CreateService#next_position: after the last movable list, or 0.
      const position = lists.length === 0 ? 0 : Math.max(...lists.map((list) => list.position)) + 1;
      return [{ type: 'ListCreated', data: { ...ref, list_id: command.listId, label_id: command.labelId, position } }];
    }
    case 'MoveList': {
      const lists = liveLists(board, command.existingLabelIds);
      const list = lists.find((l) => l.id === command.listId);
      if (!list) throw recordNotFound('List');
      // MoveService#valid_move?: a new position within the movable lists, and not the same one.
      const to = command.position;
      if (to === list.position || to < 0 || to >= lists.length) throw refusedBy('List could not be moved!');
      return [{ type: 'ListMoved', data: { ...ref, list_id: list.id, from_position: list.position, to_position: to } }];
    }
    case 'DeleteList': {
      const list = liveLists(board, command.existingLabelIds).find((l) => l.id === command.listId);
      if (!list) throw recordNotFound('List');
      return [{ type: 'ListDeleted', data: { ...ref, list_id: list.id, position: list.position } }];
    }
    default:
      return unhandled(command);
  }
}

export const boardDecider: Decider<BoardCommand, BoardEvent, BoardState, number> = {
  initialState: (id) => ({ id, board: null }),
  evolve,
  decide,
};

// ───────────────────────────── The aggregate ─────────────────────────────

/** One issue board of a project, with its lists (src/domain/boards.ts). */
export const boards = defineAggregate({
  name: 'boards',
  streamId: boardStreamId,
  events: boardEvents,
  decider: boardDecider,
  index: boardEventIndex,
  idSequence: 'boards_id_seq',
});
