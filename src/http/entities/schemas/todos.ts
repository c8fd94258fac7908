import { dateTime, entity, int, nullable, object, anyOf, ref, str, values } from './dsl.js';

const namespace = object({ id: int, name: str, path: str, kind: values('group'), full_path: str, parent_id: nullable(int) });

export const Todo = entity("Entities::Todo (`project` for a project's target, `group` for a group's).", {
  id: int,
  project: nullable(object({ id: int, description: nullable(str), name: str, name_with_namespace: str, path: str, path_with_namespace: str, created_at: dateTime })),
  group: namespace,
  author: nullable(ref('UserBasic')),
  action_name: str,
  target_type: values('Issue', 'MergeRequest', 'Epic'),
  target: anyOf(ref('Issue'), ref('MergeRequest'), ref('Epic')),
  target_url: str,
  body: str,
  state: values('pending', 'done'),
  created_at: dateTime,
}, ['project', 'group']);
