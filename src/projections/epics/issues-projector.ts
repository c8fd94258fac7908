import { defineProjector } from '../projector.js';

/**
 * Inline: EE's `epic_issues`, from the issues' streams (an issue's epic is the issue's
 * business: IssueAddedToEpic, IssueEpicPositionChanged, IssueRemovedFromEpic; a moved issue's IssueEpicLinkInherited and IssueEpicLinkPassedOn). A link goes
 * with its issue, its epic, the issue's project and the epic's group (GitLab's foreign keys,
 * `on delete cascade`), each by a column of its own row.
 */
export const epicIssuesProjector = defineProjector({
  name: 'epic_issues',
  tables: ['epic_issues'],
  on: {
    // One row per issue: a move to another epic keeps the link's id and takes the new epic and place.
    IssueAddedToEpic: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const place = { epic_id: data.epic_id, epic_group_id: data.epic_group_id, relative_position: data.relative_position };
      await trx
        .insertInto('epic_issues')
        .values({ id: data.epic_issue_id, ...place, issue_id: data.id, project_id: data.project_id, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('issue_id').doUpdateSet({ ...place, updated_at: at }))
        .execute();
    },
    IssueEpicPositionChanged: async ({ data, occurredAt }, trx) =>
      trx.updateTable('epic_issues').set({ relative_position: data.relative_position, updated_at: occurredAt.toISOString() }).where('issue_id', '=', data.id).execute(),
    IssueRemovedFromEpic: async ({ data }, trx) => trx.deleteFrom('epic_issues').where('issue_id', '=', data.id).execute(),
    // A moved issue's link goes to the new issue, its id and place kept; the original, written after it, is in no epic.
    IssueEpicLinkInherited: async ({ data, occurredAt }, trx) =>
      trx.updateTable('epic_issues').set({ issue_id: data.id, project_id: data.project_id, updated_at: occurredAt.toISOString() }).where('id', '=', data.epic_issue_id).execute(),
    IssueEpicLinkPassedOn: async ({ data }, trx) => trx.deleteFrom('epic_issues').where('issue_id', '=', data.id).execute(),
  },
  cascades: {
    IssueDeleted: async ({ data }, trx) => trx.deleteFrom('epic_issues').where('issue_id', '=', data.id).execute(),
    EpicDeleted: async ({ data }, trx) => trx.deleteFrom('epic_issues').where('epic_id', '=', data.id).execute(),
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('epic_issues').where('project_id', '=', data.id).execute(),
    GroupDeleted: async ({ data }, trx) => trx.deleteFrom('epic_issues').where('epic_group_id', '=', data.id).execute(),
  },
});
