import { bool, dateTime, entity, extend, int, str } from './dsl.js';

export const SSHKey = entity('Entities::SSHKey.', { id: int, title: str, key: str, created_at: dateTime });

export const DeployKeysProject = extend(SSHKey, 'Entities::DeployKeysProject.', { can_push: bool });
