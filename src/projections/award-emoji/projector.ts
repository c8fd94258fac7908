import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. An awardable's deletion (a merge request, an epic,
 * a note), or its project's or group's, takes its awards with it.
 */
export const awardEmojiProjector = defineProjector({
  name: 'award_emoji',
  tables: ['award_emoji'],
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
    MergeRequestDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('awardable_type', '=', 'MergeRequest').where('awardable_id', '=', String(data.id)).execute(),
    EpicDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Epic').where('awardable_id', '=', String(data.id)).execute(),
    IssueDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Issue').where('awardable_id', '=', String(data.id)).execute(),
    SnippetDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Snippet').where('awardable_id', '=', String(data.id)).execute(),
    NoteDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', '=', String(data.id)).execute(),
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('project_id', '=', data.id).execute(),
    GroupDeleted: async ({ data }, trx) => trx.deleteFrom('award_emoji').where('group_id', '=', data.id).execute(),
  },
});
