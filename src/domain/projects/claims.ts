import { type ClaimChanges, type ClaimRefusal, NO_CLAIMS } from '../decider.js';
import { invalid } from '../errors.js';
import type { ProjectState } from './decider.js';
import type { ProjectEvent } from './events.js';

/** A project's name and path are unique in its namespace: claims taken and given back with its events. */

const PROJECT_NAME_TAKEN = 'Project name has already been taken';
const PROJECT_PATH_TAKEN = 'Project path has already been taken';

/** GitLab validates the name's and the path's uniqueness on the model: a taken one is a validation error. */
export const projectClaimRefusal: ClaimRefusal = (claim) => invalid({ [claim.kind === 'project_name' ? 'name' : 'path']: ['has already been taken'] });

/** GitLab: `validates :name, uniqueness: { scope: :namespace_id }` (exact). */
export const projectNameClaim = (namespaceId: number, name: string) => ({ kind: 'project_name', key: `${namespaceId}/${name}`, conflictMessage: PROJECT_NAME_TAKEN });
/** Paths are unique in a namespace regardless of case. */
export const projectPathClaim = (namespaceId: number, path: string) => ({
  kind: 'project_path',
  key: `${namespaceId}/${path.toLowerCase()}`,
  conflictMessage: PROJECT_PATH_TAKEN,
});

export function projectClaims(event: ProjectEvent, before: ProjectState): ClaimChanges {
  switch (event.type) {
    case 'ProjectCreated':
      return { acquire: [projectNameClaim(event.data.namespace_id, event.data.name), projectPathClaim(event.data.namespace_id, event.data.path)], release: [] };
    case 'ProjectUpdated': {
      const { name, path } = event.data.changes;
      if (!before.settings || before.namespaceId === null) return NO_CLAIMS;
      const ns = before.namespaceId;
      const acquire = [];
      const release = [];
      if (name !== undefined && name !== before.settings.name) {
        acquire.push(projectNameClaim(ns, name));
        release.push(projectNameClaim(ns, before.settings.name));
      }
      if (path !== undefined && path.toLowerCase() !== before.settings.path.toLowerCase()) {
        acquire.push(projectPathClaim(ns, path));
        release.push(projectPathClaim(ns, before.settings.path));
      }
      return { acquire, release };
    }
    // Projects::TransferService: the name and path move to the new namespace.
    case 'ProjectTransferred':
      return before.settings && before.namespaceId !== null
        ? {
            acquire: [projectNameClaim(event.data.namespace_id, before.settings.name), projectPathClaim(event.data.namespace_id, before.settings.path)],
            release: [projectNameClaim(before.namespaceId, before.settings.name), projectPathClaim(before.namespaceId, before.settings.path)],
          }
        : NO_CLAIMS;
    case 'ProjectDeleted':
      return before.settings && before.namespaceId !== null
        ? { acquire: [], release: [projectNameClaim(before.namespaceId, before.settings.name), projectPathClaim(before.namespaceId, before.settings.path)] }
        : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}
