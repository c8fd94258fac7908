import { type Claim, type ClaimChanges, type ClaimRefusal, NO_CLAIMS } from '../decider.js';
import { invalid } from '../errors.js';
import type { GroupState } from './decider.js';
import type { GroupEvent } from './events.js';

const GROUP_PATH_TAKEN = 'Group path has already been taken';

/** GitLab: `validates :path, uniqueness` on the namespace — a taken path is a validation error. */
export const groupClaimRefusal: ClaimRefusal = () => invalid({ path: ['has already been taken'] });

/**
 * Top-level groups share the namespace path space with usernames (`namespace_path`);
 * subgroups are unique among their siblings (`group_path`, `<parent id>/<path>`).
 */
function groupPathClaim(parentId: number | null, path: string): Claim {
  return parentId === null
    ? { kind: 'namespace_path', key: path.toLowerCase(), conflictMessage: GROUP_PATH_TAKEN }
    : { kind: 'group_path', key: `${parentId}/${path.toLowerCase()}`, conflictMessage: GROUP_PATH_TAKEN };
}

export function groupClaims(event: GroupEvent, before: GroupState): ClaimChanges {
  switch (event.type) {
    case 'GroupCreated':
      return { acquire: [groupPathClaim(event.data.parent_id, event.data.path)], release: [] };
    case 'GroupUpdated': {
      const path = event.data.changes.path;
      if (path === undefined || !before.settings || path.toLowerCase() === before.settings.path.toLowerCase()) return NO_CLAIMS;
      return { acquire: [groupPathClaim(before.parentId, path)], release: [groupPathClaim(before.parentId, before.settings.path)] };
    }
    case 'GroupDeleted':
      return before.settings ? { acquire: [], release: [groupPathClaim(before.parentId, before.settings.path)] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}
