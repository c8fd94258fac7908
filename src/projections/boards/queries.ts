import type { Db } from '../../database/database.js';
import type { BoardListRow, BoardRow } from './tables.js';

/** A project's boards (`project.boards`), in the order they were made. */
export const boardsQuery = (db: Db, projectId: number) => db.selectFrom('boards').selectAll().where('project_id', '=', projectId);

/** `board_parent.boards.find(params[:board_id])`. */
export const findBoard = (db: Db, projectId: number, id: number): Promise<BoardRow | undefined> => boardsQuery(db, projectId).where('id', '=', id).executeTakeFirst();

/** `board.lists.destroyable`: its label lists (the API never shows the backlog and closed ones). */
export const boardListsQuery = (db: Db, boardId: number) => db.selectFrom('board_lists').selectAll().where('board_id', '=', boardId).where('list_type', '=', 'label');

/** Board's `has_many :lists, -> { ordered }`: by position. */
export const LIST_ORDER = (q: ReturnType<typeof boardListsQuery>) => q.orderBy('position').orderBy('id');

/** The label lists of several boards, by board. */
export async function listsOfBoards(db: Db, boardIds: readonly number[]): Promise<Map<number, BoardListRow[]>> {
  const byBoard = new Map<number, BoardListRow[]>(boardIds.map((id) => [id, []]));
  if (boardIds.length === 0) return byBoard;
  const rows = await db
    .selectFrom('board_lists')
    .selectAll()
    .where('board_id', 'in', boardIds)
    .where('list_type', '=', 'label')
    .orderBy('board_id')
    .orderBy('position')
    .orderBy('id')
    .execute();
  for (const row of rows) byBoard.get(row.board_id)!.push(row);
  return byBoard;
}

/** `board_lists.find(params[:list_id])`. */
export const findBoardList = (db: Db, boardId: number, id: number): Promise<BoardListRow | undefined> =>
  boardListsQuery(db, boardId).where('id', '=', id).executeTakeFirst();
