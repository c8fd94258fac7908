import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { deployKeyEvents, type DeployKeyEvent } from '../../domain/deploy-keys.js';
import { eventTypesOf } from '../../domain/events.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: the deploy keys API reads what it just wrote. A key's own events are applied once
 * (deploy_keys_stream_versions); a deleted project takes its links along by an absolute
 * condition, and its keys stay (GitLab deletes the links without their callbacks).
 */
export const deployKeysProjector: Projector = {
  name: 'deploy_keys',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(deployKeyEvents), 'ProjectDeleted'],
  tables: ['deploy_keys', 'deploy_keys_projects', 'deploy_keys_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (DeployKeyEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('deploy_keys_projects').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'deploy_keys_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const ofLink = (data: { id: number; project_id: number }) => ({ deploy_key_id: data.id, project_id: data.project_id });
    switch (event.type) {
      case 'DeployKeyCreated': {
        const d = event.data;
        await trx
          .insertInto('deploy_keys')
          .values({ ...d, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      }
      case 'DeployKeyTitleChanged':
        await trx.updateTable('deploy_keys').set({ title: event.data.title, updated_at: at }).where('id', '=', event.data.id).execute();
        return;
      case 'DeployKeyLinked':
        await trx
          .insertInto('deploy_keys_projects')
          .values({ ...ofLink(event.data), can_push: event.data.can_push, created_at: at, updated_at: at })
          .onConflict((oc) => oc.columns(['deploy_key_id', 'project_id']).doNothing())
          .execute();
        return;
      case 'DeployKeyLinkUpdated': {
        const { deploy_key_id, project_id } = ofLink(event.data);
        await trx
          .updateTable('deploy_keys_projects')
          .set({ can_push: event.data.can_push, updated_at: at })
          .where('deploy_key_id', '=', deploy_key_id)
          .where('project_id', '=', project_id)
          .execute();
        return;
      }
      case 'DeployKeyUnlinked':
        await trx.deleteFrom('deploy_keys_projects').where('deploy_key_id', '=', event.data.id).where('project_id', '=', event.data.project_id).execute();
        return;
      case 'DeployKeyDeleted':
        await trx.deleteFrom('deploy_keys_projects').where('deploy_key_id', '=', event.data.id).execute();
        await trx.deleteFrom('deploy_keys').where('id', '=', event.data.id).execute();
        return;
      default:
        return unhandled(event);
    }
  },
};
