import { arrayOf, entity, int, nullable, object, anyOf, ref, str } from './dsl.js';

export const List = entity("Entities::List: a board's list (EE's limits under `wip_limits`).", {
  id: int,
  label: nullable(ref('LabelBasic')),
  position: int,
  max_issue_count: int,
  max_issue_weight: int,
}, ['max_issue_count', 'max_issue_weight']);

export const Board = entity("Entities::Board (EE's `name`, `group`; the scope under `scoped_issue_board`).", {
  id: int,
  project: ref('BasicProjectDetails'),
  lists: arrayOf(ref('List')),
  name: str,
  group: { type: 'null' },
  milestone: nullable(anyOf(ref('Milestone'), object({ title: str }))),
  assignee: nullable(ref('UserBasic')),
  labels: arrayOf(ref('LabelBasic')),
  weight: nullable(int),
}, ['name', 'group', 'milestone', 'assignee', 'labels', 'weight']);
