import { sql } from 'kysely';
import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A board's own events are applied once (the kernel
 * guards them by boards_stream_versions), so a move's renumbering is applied once too. A
 * project's deletion takes its boards and lists; a label's deletion takes its lists, leaving
 * the others' positions as they are (GitLab's `lists.label_id` foreign key, `on delete
 * cascade`), and leaves the boards scoped to it (`board_labels`, likewise).
 */
export const boardsProjector = defineProjector({
  name: 'boards',
  tables: ['boards', 'board_lists'],
  on: {
    BoardCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { id, project_id, name } = data;
      await trx
        .insertInto('boards')
        .values({ id, project_id, name, milestone_id: null, assignee_id: null, label_ids: [], weight: null, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      // Boards::CreateService: every board starts with its backlog and closed lists.
      const list = { board_id: id, project_id, label_id: null, position: null, created_at: at, updated_at: at };
      await trx
        .insertInto('board_lists')
        .values([
          { ...list, id: data.backlog_list_id, list_type: 'backlog' },
          { ...list, id: data.closed_list_id, list_type: 'closed' },
        ])
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    BoardUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('boards')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    BoardDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('board_lists').where('board_id', '=', data.id).execute();
      await trx.deleteFrom('boards').where('id', '=', data.id).execute();
    },
    ListCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('board_lists')
        .values({ id: data.list_id, board_id: data.id, project_id: data.project_id, list_type: 'label', label_id: data.label_id, position: data.position, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    // Lists::MoveService: the lists between the two positions shift by one towards the old one.
    ListMoved: async ({ data, occurredAt }, trx) => {
      const { id, list_id, from_position: from, to_position: to } = data;
      const shift = from < to ? sql<number>`position - 1` : sql<number>`position + 1`;
      const [low, high] = from < to ? [from + 1, to] : [to, from - 1];
      await trx
        .updateTable('board_lists')
        .set({ position: shift })
        .where('board_id', '=', id)
        .where('list_type', '=', 'label')
        .where('id', '!=', list_id)
        .where('position', '>=', low)
        .where('position', '<=', high)
        .execute();
      await trx.updateTable('board_lists').set({ position: to, updated_at: occurredAt.toISOString() }).where('id', '=', list_id).execute();
    },
    // Lists::DestroyService: the lists after it move up by one.
    ListDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('board_lists').where('id', '=', data.list_id).execute();
      await trx
        .updateTable('board_lists')
        .set({ position: sql<number>`position - 1` })
        .where('board_id', '=', data.id)
        .where('list_type', '=', 'label')
        .where('position', '>', data.position)
        .execute();
    },
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('board_lists').where('project_id', '=', data.id).execute();
      await trx.deleteFrom('boards').where('project_id', '=', data.id).execute();
    },
    LabelDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('board_lists').where('label_id', '=', data.id).execute();
      await trx
        .updateTable('boards')
        .set({ label_ids: sql<number[]>`array_remove(label_ids, ${data.id})` })
        .where(sql<boolean>`${data.id} = any(label_ids)`)
        .execute();
    },
  },
});
