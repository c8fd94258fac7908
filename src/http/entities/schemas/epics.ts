import { arrayOf, bool, date, dateTime, entity, extend, int, nullable, ref, references, str, values } from './dsl.js';
import { Issue } from './issues.js';

export const Epic = entity(
  "EE's Entities::Epic (the fixed and inherited dates and `web_edit_url` for who may administer it; `subscribed` on the single view).",
  {
    id: int,
    iid: int,
    group_id: int,
    parent_id: nullable(int),
    title: str,
    description: nullable(str),
    author: nullable(ref('UserBasic')),
    start_date: nullable(date),
    start_date_is_fixed: bool,
    start_date_fixed: nullable(date),
    start_date_from_inherited_source: nullable(date),
    start_date_from_milestones: nullable(date),
    end_date: nullable(date),
    due_date: nullable(date),
    due_date_is_fixed: bool,
    due_date_fixed: nullable(date),
    due_date_from_inherited_source: nullable(date),
    due_date_from_milestones: nullable(date),
    state: values('opened', 'closed'),
    web_edit_url: str,
    web_url: str,
    references,
    reference: str,
    created_at: dateTime,
    updated_at: dateTime,
    closed_at: nullable(dateTime),
    labels: arrayOf(str),
    upvotes: int,
    downvotes: int,
    subscribed: bool,
  },
  [
    'start_date_is_fixed', 'start_date_fixed', 'start_date_from_inherited_source', 'start_date_from_milestones',
    'due_date_is_fixed', 'due_date_fixed', 'due_date_from_inherited_source', 'due_date_from_milestones', 'web_edit_url', 'subscribed',
  ],
);

export const EpicBase = entity("EE's Entities::EpicBase: an issue's epic.", {
  id: int,
  iid: int,
  title: str,
  url: str,
  group_id: int,
  human_readable_end_date: str,
  human_readable_timestamp: nullable(str),
}, ['human_readable_end_date', 'human_readable_timestamp']);



export const EpicIssue = extend(Issue, "EE's Entities::EpicIssue: an issue of the epic and its link.", { epic_issue_id: int, relative_position: nullable(int) });

export const EpicIssueLink = entity("EE's Entities::EpicIssueLink.", { id: int, relative_position: nullable(int), epic: ref('Epic'), issue: ref('IssueBasic') });
