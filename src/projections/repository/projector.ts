import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import { repositoryEvents, type RepositoryEvent } from '../../domain/repository/decider.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: a push answers with what it wrote. The branches of each repository; the objects
 * are not this projection's (the commands write them, and a rebuild must not lose them).
 */
export const repositoryProjector: Projector = {
  name: 'repository',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(repositoryEvents), 'ProjectDeleted'],
  tables: ['repository_branches', 'repository_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (RepositoryEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('repository_branches').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'repository_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { project_id, branch } = event.data;
    switch (event.type) {
      case 'BranchCreated':
      case 'BranchUpdated':
        await trx
          .insertInto('repository_branches')
          .values({ project_id, name: branch, sha: event.data.new_sha, updated_at: at })
          .onConflict((oc) => oc.columns(['project_id', 'name']).doUpdateSet({ sha: event.data.new_sha, updated_at: at }))
          .execute();
        return;
      case 'BranchDeleted':
        await trx.deleteFrom('repository_branches').where('project_id', '=', project_id).where('name', '=', branch).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
