import type { Updateable } from 'kysely';
import type { Db } from '../../database/database.js';
import type { VersionData } from '../../domain/merge-requests/events.js';
import { defineProjector, type Projected } from '../projector.js';
import type { MergeRequestsTable } from './tables.js';

async function insertVersion(trx: Db, mergeRequestId: number, version: VersionData, at: string) {
  await trx
    .insertInto('merge_request_versions')
    .values({
      id: version.version_id,
      merge_request_id: mergeRequestId,
      head_commit_sha: version.head_commit_sha,
      base_commit_sha: version.base_commit_sha,
      start_commit_sha: version.start_commit_sha,
      commit_shas: version.commit_shas,
      files_count: version.files_count,
      created_at: at,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** The row's columns of the latest version. */
const latest = (version: VersionData) => ({
  head_sha: version.head_commit_sha,
  base_sha: version.base_commit_sha,
  start_sha: version.start_commit_sha,
  latest_version_id: version.version_id,
  changes_count: version.files_count,
});

const UNCHECKED = { merge_status: 'unchecked', merge_status_target_sha: null } as const;

const update = (trx: Db, id: number, values: Updateable<MergeRequestsTable>) => trx.updateTable('merge_requests').set(values).where('id', '=', id).execute();

const subscription = async ({ type, data }: Projected<'MergeRequestSubscribed' | 'MergeRequestUnsubscribed'>, trx: Db) => {
  const subscribed = type === 'MergeRequestSubscribed';
  await trx
    .insertInto('merge_request_subscriptions')
    .values({ merge_request_id: data.id, user_id: data.user_id, subscribed })
    .onConflict((oc) => oc.columns(['merge_request_id', 'user_id']).doUpdateSet({ subscribed }))
    .execute();
};

/**
 * Inline: the API reads what it just wrote. A merge request's own events are applied once
 * (the kernel guards them by merge_requests_stream_versions); a project's deletion takes its
 * merge requests, their versions and subscriptions with it.
 */
export const mergeRequestsProjector = defineProjector({
  name: 'merge_requests',
  tables: ['merge_requests', 'merge_request_versions', 'merge_request_subscriptions', 'merge_request_iids'],
  on: {
    MergeRequestOpened: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { version, ...d } = data;
      await trx
        .insertInto('merge_requests')
        .values({
          ...d,
          state: 'opened',
          merge_status: 'unchecked',
          merge_status_target_sha: null,
          ...latest(version),
          merge_commit_sha: null,
          squash_commit_sha: null,
          merged_by_id: null,
          merged_at: null,
          closed_by_id: null,
          closed_at: null,
          time_estimate: 0,
          total_time_spent: 0,
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await insertVersion(trx, d.id, version, at);
      await trx
        .insertInto('merge_request_iids')
        .values({ project_id: d.project_id, last_iid: d.iid })
        .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ last_iid: eb.fn('greatest', [eb.ref('merge_request_iids.last_iid'), eb.ref('excluded.last_iid')]) })))
        .execute();
    },
    MergeRequestUpdated: async ({ data, occurredAt }, trx) => {
      const { target_branch, ...changes } = data.changes;
      await update(trx, data.id, { ...changes, ...(target_branch !== undefined ? { target_branch, ...UNCHECKED } : {}), updated_at: occurredAt.toISOString() });
    },
    MergeRequestClosed: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await update(trx, data.id, { state: 'closed', closed_by_id: data.by_id, closed_at: at, updated_at: at });
    },
    // MergeRequestMetricsService#reopen: the latest closer and closing time are cleared.
    MergeRequestReopened: async ({ data, occurredAt }, trx) =>
      update(trx, data.id, { state: 'opened', ...UNCHECKED, closed_by_id: null, closed_at: null, updated_at: occurredAt.toISOString() }),
    MergeRequestMerged: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await update(trx, data.id, {
        state: 'merged',
        merged_by_id: data.by_id,
        merged_at: at,
        merge_commit_sha: data.merge_commit_sha,
        squash_commit_sha: data.squash_commit_sha,
        updated_at: at,
      });
    },
    MergeRequestDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('merge_request_versions').where('merge_request_id', '=', data.id).execute();
      await trx.deleteFrom('merge_request_subscriptions').where('merge_request_id', '=', data.id).execute();
      await trx.deleteFrom('merge_requests').where('id', '=', data.id).execute();
    },
    MergeRequestVersionRecorded: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await insertVersion(trx, data.id, data.version, at);
      await update(trx, data.id, { ...latest(data.version), ...UNCHECKED, updated_at: at });
    },
    // GitLab's merge_status column is not an edit: updated_at stays.
    MergeRequestMergeStatusChecked: async ({ data }, trx) => update(trx, data.id, { merge_status: data.merge_status, merge_status_target_sha: data.target_sha }),
    // GitLab's update_column(:merge_error): not an edit either.
    MergeRequestRebaseFailed: async ({ data }, trx) => update(trx, data.id, { merge_error: data.merge_error }),
    // A ref of the repository, not an edit of the merge request.
    MergeRequestMergeRefUpdated: async ({ data }, trx) => update(trx, data.id, { merge_ref_sha: data.commit_sha, merge_ref_target_sha: data.target_sha, merge_ref_source_sha: data.source_sha }),
    MergeRequestTimeEstimateChanged: async ({ data, occurredAt }, trx) =>
      update(trx, data.id, { time_estimate: data.time_estimate, updated_at: occurredAt.toISOString() }),
    MergeRequestTimeSpent: async ({ data, occurredAt }, trx) =>
      trx
        .updateTable('merge_requests')
        .set((eb) => ({ total_time_spent: eb('total_time_spent', '+', data.time_spent), updated_at: occurredAt.toISOString() }))
        .where('id', '=', data.id)
        .execute(),
    MergeRequestSubscribed: subscription,
    MergeRequestUnsubscribed: subscription,
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      const gone = trx.selectFrom('merge_requests').select('id').where('project_id', '=', data.id);
      await trx.deleteFrom('merge_request_versions').where('merge_request_id', 'in', gone).execute();
      await trx.deleteFrom('merge_request_subscriptions').where('merge_request_id', 'in', gone).execute();
      await trx.deleteFrom('merge_requests').where('project_id', '=', data.id).execute();
    },
  },
});
