import { bool, dateTime, entity, extend, int, nullable, str } from './dsl.js';

export const Hook = entity('Entities::Hook: a system hook.', {
  id: int,
  url: str,
  created_at: dateTime,
  push_events: bool,
  tag_push_events: bool,
  merge_requests_events: bool,
  repository_update_events: bool,
  enable_ssl_verification: bool,
});

const scopedEvents = {
  issues_events: bool,
  confidential_issues_events: bool,
  note_events: bool,
  confidential_note_events: nullable(bool),
  pipeline_events: bool,
  wiki_page_events: bool,
  job_events: bool,
};

export const ProjectHook = extend(Hook, 'Entities::ProjectHook.', { project_id: int, ...scopedEvents, push_events_branch_filter: nullable(str) });

export const GroupHook = extend(Hook, "EE's Entities::GroupHook.", { group_id: int, ...scopedEvents });
