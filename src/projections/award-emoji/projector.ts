import type { Db } from '../../database/database.js';
import { defineProjector } from '../projector.js';

const forget = (trx: Db, type: 'MergeRequest' | 'Epic' | 'Issue' | 'Snippet' | 'Note', id: number) =>
  trx.deleteFrom('award_emoji').where('awardable_type', '=', type).where('awardable_id', '=', String(id)).execute();

/**
 * The awards on notes of a noteable just deleted (GitLab: the noteable's notes `dependent:
 * :destroy`, each note's awards with it). The notes projector has forgotten those notes already
 * (it applies an event before this one, and a rebuild replays it first: `reads`), so they are
 * the awards on notes of the project or group that no note is left for.
 */
const forgetOrphanNoteAwards = (trx: Db, scope: 'project_id' | 'group_id', id: number) =>
  trx
    .deleteFrom('award_emoji')
    .where('awardable_type', '=', 'Note')
    .where(scope, '=', id)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('notes').select('notes.id').whereRef('notes.id', '=', 'award_emoji.awardable_id'))))
    .execute();

/**
 * Inline: the API reads what it just wrote. An awardable's deletion (a merge request, an issue,
 * a snippet, an epic, a note), or its project's or group's, takes its awards with it, and a
 * noteable's deletion the awards on its notes.
 */
export const awardEmojiProjector = defineProjector({
  name: 'award_emoji',
  tables: ['award_emoji'],
  reads: ['notes', 'snippets'],
  on: {
    AwardEmojiAwarded: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('award_emoji')
        .values({
          id: data.id,
          name: data.name,
          user_id: data.user_id,
          awardable_type: data.awardable_type,
          awardable_id: data.awardable_id,
          project_id: data.project_id,
          group_id: data.group_id,
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    AwardEmojiRemoved: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('id', '=', data.id).execute(),
  },
  cascades: {
    MergeRequestDeleted: async ({ data }, trx) => {
      await forget(trx, 'MergeRequest', data.id);
      await forgetOrphanNoteAwards(trx, 'project_id', data.project_id);
    },
    EpicDeleted: async ({ data }, trx) => {
      await forget(trx, 'Epic', data.id);
      await forgetOrphanNoteAwards(trx, 'group_id', data.group_id);
    },
    IssueDeleted: async ({ data }, trx) => {
      await forget(trx, 'Issue', data.id);
      await forgetOrphanNoteAwards(trx, 'project_id', data.project_id);
    },
    SnippetDeleted: async ({ data }, trx) => {
      await forget(trx, 'Snippet', data.id);
      // A personal snippet has no notes in forgelog (API::Notes serves project snippets).
      if (data.project_id !== null) await forgetOrphanNoteAwards(trx, 'project_id', data.project_id);
    },
    NoteDeleted: async ({ data }, trx) => forget(trx, 'Note', data.id),
    // A user's deletion takes the snippets they wrote, and their notes (docs/snippets.md): the awards on both.
    UserDeleted: async (_, trx) => {
      await trx
        .deleteFrom('award_emoji')
        .where('awardable_type', '=', 'Snippet')
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('snippets').select('snippets.id').whereRef('snippets.id', '=', 'award_emoji.awardable_id'))))
        .execute();
      await trx
        .deleteFrom('award_emoji')
        .where('awardable_type', '=', 'Note')
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('notes').select('notes.id').whereRef('notes.id', '=', 'award_emoji.awardable_id'))))
        .execute();
    },
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('project_id', '=', data.id).execute(),
    GroupDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('group_id', '=', data.id).execute(),
  },
});
