import { defineProjector } from '../projector.js';

/**
 * Inline: the API reads what it just wrote. A link goes with either of its issues and with
 * either of their projects (GitLab's `issue_links` foreign keys, `on delete cascade`).
 */
export const issueLinksProjector = defineProjector({
  name: 'issue_links',
  tables: ['issue_links'],
  on: {
    IssueLinkCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('issue_links')
        .values({ ...data, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    IssueLinkDeleted: async ({ data }, trx) => trx.deleteFrom('issue_links').where('id', '=', data.id).execute(),
  },
  cascades: {
    IssueDeleted: async ({ data }, trx) =>
      trx
        .deleteFrom('issue_links')
        .where((eb) => eb.or([eb('source_id', '=', data.id), eb('target_id', '=', data.id)]))
        .execute(),
    ProjectDeleted: async ({ data }, trx) =>
      trx
        .deleteFrom('issue_links')
        .where((eb) => eb.or([eb('source_project_id', '=', data.id), eb('target_project_id', '=', data.id)]))
        .execute(),
  },
});
