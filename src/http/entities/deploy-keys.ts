import type { DeployKeyRow } from '../../projections/deploy-keys/tables.js';
import { iso } from './users.js';

type SshKeyFields = Pick<DeployKeyRow, 'id' | 'title' | 'key' | 'created_at'>;

/** Entities::SSHKey (GitLab 12): id, title, key, created_at. */
export const toSshKey = (row: SshKeyFields) => ({ id: row.id, title: row.title, key: row.key, created_at: iso(row.created_at) });

/** Entities::DeployKeysProject: the key (SSHKey, merged) and the project's can_push. */
export const toDeployKeysProject = (row: SshKeyFields & { can_push: boolean }) => ({ ...toSshKey(row), can_push: row.can_push });
