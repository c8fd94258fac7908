import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A project's deletion takes its snippets with it,
 * and a user's deletion the snippets they wrote (docs/snippets.md: GitLab 12 moves a deleted
 * user's project snippets to its ghost user, which forgelog does not have), by absolute
 * conditions that a replay finds nothing more to do for.
 */
export const snippetsProjector = defineProjector({
  name: 'snippets',
  tables: ['snippets'],
  on: {
    SnippetCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('snippets')
        .values({ ...data, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    SnippetUpdated: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('snippets')
        .set({ ...data.changes, updated_at: occurredAt.toISOString() })
        .where('id', '=', data.id)
        .execute(),
    SnippetDeleted: async ({ data }, trx) => trx.deleteFrom('snippets').where('id', '=', data.id).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('snippets').where('project_id', '=', data.id).execute(),
    UserDeleted: async ({ data }, trx) => trx.deleteFrom('snippets').where('author_id', '=', data.id).execute(),
  },
});
