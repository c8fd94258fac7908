import type { Updateable } from 'kysely';
import type { Db } from '../../database/database.js';
import { defineProjector, type Projected } from '../projector.js';
import type { IssuesTable } from './tables.js';

const update = (trx: Db, id: number, values: Updateable<IssuesTable>) => trx.updateTable('issues').set(values).where('id', '=', id).execute();

const subscription = async ({ type, data }: Projected<'IssueSubscribed' | 'IssueUnsubscribed'>, trx: Db) => {
  const subscribed = type === 'IssueSubscribed';
  await trx
    .insertInto('issue_subscriptions')
    .values({ issue_id: data.id, user_id: data.user_id, subscribed })
    .onConflict((oc) => oc.columns(['issue_id', 'user_id']).doUpdateSet({ subscribed }))
    .execute();
};

/**
 * Inline: the API reads what it just wrote. An issue's own events are applied once (the
 * kernel guards them by issues_stream_versions); a project's deletion takes its issues and
 * their subscriptions with it.
 */
export const issuesProjector = defineProjector({
  name: 'issues',
  tables: ['issues', 'issue_subscriptions', 'issue_iids'],
  on: {
    IssueOpened: async ({ data, occurredAt }, trx) => {
      const { created_at, ...d } = data;
      const at = occurredAt.toISOString();
      await trx
        .insertInto('issues')
        .values({
          ...d,
          state: 'opened',
          relative_position: null,
          moved_to_id: null,
          closed_by_id: null,
          closed_at: null,
          time_estimate: 0,
          total_time_spent: 0,
          user_notes_count: 0,
          upvotes: 0,
          downvotes: 0,
          created_at: created_at ?? at,
          updated_at: created_at ?? at,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await trx
        .insertInto('issue_iids')
        .values({ project_id: d.project_id, last_iid: d.iid })
        .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ last_iid: eb.fn('greatest', [eb.ref('issue_iids.last_iid'), eb.ref('excluded.last_iid')]) })))
        .execute();
    },
    IssueUpdated: async ({ data, occurredAt }, trx) => update(trx, data.id, { ...data.changes, updated_at: data.updated_at ?? occurredAt.toISOString() }),
    IssueClosed: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await update(trx, data.id, { state: 'closed', closed_by_id: data.by_id, closed_at: at, updated_at: at });
    },
    // Issues::ReopenService: closed_at and closed_by are cleared.
    IssueReopened: async ({ data, occurredAt }, trx) => update(trx, data.id, { state: 'opened', closed_by_id: null, closed_at: null, updated_at: occurredAt.toISOString() }),
    IssueMoved: async ({ data, occurredAt }, trx) => update(trx, data.id, { moved_to_id: data.moved_to_id, updated_at: occurredAt.toISOString() }),
    IssueDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('issue_subscriptions').where('issue_id', '=', data.id).execute();
      await trx.deleteFrom('issues').where('id', '=', data.id).execute();
    },
    IssueTimeEstimateChanged: async ({ data, occurredAt }, trx) => update(trx, data.id, { time_estimate: data.time_estimate, updated_at: occurredAt.toISOString() }),
    IssueTimeSpent: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('issues')
        .set((eb) => ({ total_time_spent: eb('total_time_spent', '+', data.time_spent), updated_at: occurredAt.toISOString() }))
        .where('id', '=', data.id)
        .execute(),
    IssueSubscribed: subscription,
    IssueUnsubscribed: subscription,
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      const gone = trx.selectFrom('issues').select('id').where('project_id', '=', data.id);
      await trx.deleteFrom('issue_subscriptions').where('issue_id', 'in', gone).execute();
      await trx.deleteFrom('issues').where('project_id', '=', data.id).execute();
    },
  },
});
