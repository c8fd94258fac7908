import type { Updateable } from 'kysely';
import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { mergeRequestEvents, type MergeRequestEvent, type VersionData } from '../../domain/merge-requests/events.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';
import type { MergeRequestsTable } from './tables.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

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

/**
 * Inline: the API reads what it just wrote. A merge request's own events are applied once
 * (merge_requests_stream_versions); a project's deletion takes its merge requests, their
 * versions and subscriptions with it.
 */
export const mergeRequestsProjector: Projector = {
  name: 'merge_requests',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(mergeRequestEvents), 'ProjectDeleted'],
  tables: ['merge_requests', 'merge_request_versions', 'merge_request_subscriptions', 'merge_request_iids', 'merge_requests_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (MergeRequestEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      const gone = trx.selectFrom('merge_requests').select('id').where('project_id', '=', event.data.id);
      await trx.deleteFrom('merge_request_versions').where('merge_request_id', 'in', gone).execute();
      await trx.deleteFrom('merge_request_subscriptions').where('merge_request_id', 'in', gone).execute();
      await trx.deleteFrom('merge_requests').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'merge_requests_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id } = event.data;
    const update = (values: Updateable<MergeRequestsTable>) => trx.updateTable('merge_requests').set(values).where('id', '=', id).execute();
    switch (event.type) {
      case 'MergeRequestOpened': {
        const { version, ...d } = event.data;
        await trx
          .insertInto('merge_requests')
          .values({
            ...d,
            state: 'opened',
            merge_status: 'unchecked',
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
        await insertVersion(trx, id, version, at);
        await trx
          .insertInto('merge_request_iids')
          .values({ project_id: d.project_id, last_iid: d.iid })
          .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ last_iid: eb.fn('greatest', [eb.ref('merge_request_iids.last_iid'), eb.ref('excluded.last_iid')]) })))
          .execute();
        return;
      }
      case 'MergeRequestUpdated': {
        const { target_branch, ...changes } = event.data.changes;
        await update({ ...changes, ...(target_branch !== undefined ? { target_branch, merge_status: 'unchecked' as const } : {}), updated_at: at });
        return;
      }
      case 'MergeRequestClosed':
        await update({ state: 'closed', closed_by_id: event.data.by_id, closed_at: at, updated_at: at });
        return;
      case 'MergeRequestReopened':
        // MergeRequestMetricsService#reopen: the latest closer and closing time are cleared.
        await update({ state: 'opened', merge_status: 'unchecked', closed_by_id: null, closed_at: null, updated_at: at });
        return;
      case 'MergeRequestMerged':
        await update({
          state: 'merged',
          merged_by_id: event.data.by_id,
          merged_at: at,
          merge_commit_sha: event.data.merge_commit_sha,
          squash_commit_sha: event.data.squash_commit_sha,
          updated_at: at,
        });
        return;
      case 'MergeRequestDeleted':
        await trx.deleteFrom('merge_request_versions').where('merge_request_id', '=', id).execute();
        await trx.deleteFrom('merge_request_subscriptions').where('merge_request_id', '=', id).execute();
        await trx.deleteFrom('merge_requests').where('id', '=', id).execute();
        return;
      case 'MergeRequestVersionRecorded':
        await insertVersion(trx, id, event.data.version, at);
        await update({ ...latest(event.data.version), merge_status: 'unchecked', updated_at: at });
        return;
      case 'MergeRequestMergeStatusChecked':
        // GitLab's merge_status column is not an edit: updated_at stays.
        await update({ merge_status: event.data.merge_status });
        return;
      case 'MergeRequestTimeEstimateChanged':
        await update({ time_estimate: event.data.time_estimate, updated_at: at });
        return;
      case 'MergeRequestTimeSpent':
        await trx
          .updateTable('merge_requests')
          .set((eb) => ({ total_time_spent: eb('total_time_spent', '+', event.data.time_spent), updated_at: at }))
          .where('id', '=', id)
          .execute();
        return;
      case 'MergeRequestSubscribed':
      case 'MergeRequestUnsubscribed': {
        const subscribed = event.type === 'MergeRequestSubscribed';
        await trx
          .insertInto('merge_request_subscriptions')
          .values({ merge_request_id: id, user_id: event.data.user_id, subscribed })
          .onConflict((oc) => oc.columns(['merge_request_id', 'user_id']).doUpdateSet({ subscribed }))
          .execute();
        return;
      }
      default:
        unhandled(event);
    }
  },
};
