import { arrayOf, bool, entity, int, nullable, object, str } from './dsl.js';

const accessLevel = {
  access_level: int,
  access_level_description: nullable(str),
};

export const ProtectedBranch = entity("Entities::ProtectedBranch (EE: users' and groups' rules, `unprotect_access_levels`, `code_owner_approval_required`).", {
  name: str,
  push_access_levels: arrayOf(object({ ...accessLevel, user_id: nullable(int), group_id: nullable(int) }, ['user_id', 'group_id'])),
  merge_access_levels: arrayOf(object({ ...accessLevel, user_id: nullable(int), group_id: nullable(int) }, ['user_id', 'group_id'])),
  unprotect_access_levels: arrayOf(object({ ...accessLevel, user_id: nullable(int), group_id: nullable(int) }, ['user_id', 'group_id'])),
  code_owner_approval_required: bool,
}, ['unprotect_access_levels', 'code_owner_approval_required']);

export const ProtectedTag = entity('Entities::ProtectedTag.', { name: str, create_access_levels: arrayOf(object(accessLevel)) });
