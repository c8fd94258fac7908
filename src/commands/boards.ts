import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { type BoardCommand, boards } from '../domain/boards.js';
import { nextId } from './kernel/handler.js';
import { create, run } from './kernel/run.js';
import type { Writer } from './kernel/context.js';

/**
 * The board commands that read facts of another area: which of the project's labels exist
 * (a list goes with its label), read in the write transaction. The label a new list names is
 * locked (`for share`) so that its deletion waits for the list, whose row its cascade then
 * takes, as GitLab's foreign key does.
 */

/** The ids of the project's labels, the one named by `locking` held until the commit. */
async function existingLabelIds(trx: Db, projectId: number, locking?: number): Promise<number[]> {
  if (locking !== undefined) await sql`select id from labels where id = ${locking} and project_id = ${projectId} for share`.execute(trx);
  const rows = await trx.selectFrom('labels').select('id').where('project_id', '=', projectId).execute();
  return rows.map((row) => row.id);
}

/** Boards::CreateService: the board, with its backlog and closed lists. */
export async function createBoard(w: Writer, projectId: number, name: string) {
  const backlogListId = await nextId(w.ctx.db, 'board_lists_id_seq');
  const closedListId = await nextId(w.ctx.db, 'board_lists_id_seq');
  return create(w, boards, () => ({ type: 'CreateBoard', projectId, name, backlogListId, closedListId }));
}

/** Boards::Lists::CreateService for a label list; answers the new list's id. */
export async function createList(w: Writer, projectId: number, boardId: number, labelId: number): Promise<number> {
  const listId = await nextId(w.ctx.db, 'board_lists_id_seq');
  await run(w, boards, boardId, async (trx): Promise<BoardCommand> => ({ type: 'CreateList', listId, labelId, existingLabelIds: await existingLabelIds(trx, projectId, labelId) }));
  return listId;
}

/** Boards::Lists::MoveService. */
export const moveList = (w: Writer, projectId: number, boardId: number, listId: number, position: number) =>
  run(w, boards, boardId, async (trx): Promise<BoardCommand> => ({ type: 'MoveList', listId, position, existingLabelIds: await existingLabelIds(trx, projectId) }));

/** Boards::Lists::DestroyService. */
export const deleteList = (w: Writer, projectId: number, boardId: number, listId: number) =>
  run(w, boards, boardId, async (trx): Promise<BoardCommand> => ({ type: 'DeleteList', listId, existingLabelIds: await existingLabelIds(trx, projectId) }));
