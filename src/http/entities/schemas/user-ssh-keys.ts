import { SSHKey } from './deploy-keys.js';
import { extend, nullable, ref } from './dsl.js';

export const SSHKeyWithUser = extend(SSHKey, 'Entities::SSHKeyWithUser: the key and its owner (null for a deploy key nobody owns).', { user: nullable(ref('UserPublic')) });
