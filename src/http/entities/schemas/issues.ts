import { arrayOf, bool, date, dateTime, entity, extend, int, nullable, object, anyOf, ref, references, str, taskCompletionStatus, values } from './dsl.js';

const user = nullable(ref('UserBasic'));

export const IssueBasic = entity(
  "Entities::IssueBasic (`labels` as LabelBasic with `with_labels_details=true`; EE's `weight` under its licence).",
  {
    id: int,
    iid: int,
    project_id: int,
    title: str,
    description: nullable(str),
    state: values('opened', 'closed'),
    created_at: dateTime,
    updated_at: dateTime,
    closed_at: nullable(dateTime),
    closed_by: user,
    labels: anyOf(arrayOf(str), arrayOf(ref('LabelBasic'))),
    milestone: nullable(ref('Milestone')),
    assignees: arrayOf(ref('UserBasic')),
    author: user,
    assignee: user,
    user_notes_count: int,
    merge_requests_count: int,
    upvotes: int,
    downvotes: int,
    due_date: nullable(date),
    confidential: bool,
    discussion_locked: nullable(bool),
    web_url: str,
    time_stats: ref('IssuableTimeStats'),
    task_completion_status: taskCompletionStatus,
    weight: nullable(int),
  },
  ['weight'],
);

export const Issue = extend(
  IssueBasic,
  "Entities::Issue (`task_status` with tasks, `subscribed` on the single view; EE's `epic_iid` and `epic` for who may read the group's epics).",
  {
    has_tasks: bool,
    task_status: str,
    _links: object({ self: str, notes: str, award_emoji: str, project: str }),
    references,
    subscribed: bool,
    moved_to_id: nullable(int),
    epic_iid: nullable(int),
    epic: nullable(ref('EpicBase')),
  },
  ['task_status', 'subscribed', 'epic_iid', 'epic'],
);

export const IssuesStatistics = entity('Entities::IssuesStatistics.', { statistics: object({ counts: object({ all: int, closed: int, opened: int }) }) });

export const UserAgentDetail = entity('Entities::UserAgentDetail.', { user_agent: str, ip_address: str, akismet_submitted: bool });
