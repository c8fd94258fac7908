import type { HookRow } from '../../projections/hooks/tables.js';
import { iso } from './users.js';

/** Entities::Hook (12.10): a system hook. */
export const toHook = (row: HookRow) => ({
  id: row.id,
  url: row.url,
  created_at: iso(row.created_at),
  push_events: row.push_events,
  tag_push_events: row.tag_push_events,
  merge_requests_events: row.merge_requests_events,
  repository_update_events: row.repository_update_events,
  enable_ssl_verification: row.enable_ssl_verification,
});

/** Entities::ProjectHook (12.10): Hook's fields, then the project's. The token is never shown. */
export const toProjectHook = (row: HookRow) => ({
  ...toHook(row),
  project_id: row.project_id,
  issues_events: row.issues_events,
  confidential_issues_events: row.confidential_issues_events,
  note_events: row.note_events,
  confidential_note_events: row.confidential_note_events,
  pipeline_events: row.pipeline_events,
  wiki_page_events: row.wiki_page_events,
  job_events: row.job_events,
  push_events_branch_filter: row.push_events_branch_filter,
});

/** EE::API::Entities::GroupHook (12.10): Hook's fields, then the group's (no branch filter). */
export const toGroupHook = (row: HookRow) => ({
  ...toHook(row),
  group_id: row.group_id,
  issues_events: row.issues_events,
  confidential_issues_events: row.confidential_issues_events,
  note_events: row.note_events,
  confidential_note_events: row.confidential_note_events,
  pipeline_events: row.pipeline_events,
  wiki_page_events: row.wiki_page_events,
  job_events: row.job_events,
});
