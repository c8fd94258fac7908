import type { Selectable } from 'kysely';
import type { HookKind } from '../../domain/hooks/decider.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';

/** GitLab's `web_hooks` (migration 0064): project, group and system hooks, `kind` telling them apart. */
export interface HooksTable {
  id: number;
  kind: HookKind;
  project_id: number | null;
  group_id: number | null;
  url: string;
  push_events: boolean;
  push_events_branch_filter: string | null;
  issues_events: boolean;
  confidential_issues_events: boolean;
  merge_requests_events: boolean;
  tag_push_events: boolean;
  note_events: boolean;
  confidential_note_events: boolean | null;
  job_events: boolean;
  pipeline_events: boolean;
  wiki_page_events: boolean;
  repository_update_events: boolean;
  enable_ssl_verification: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Written by the hooks' commands in their transaction, never by a projector: a hook's sealed token. */
export interface HookSecretsTable {
  hook_id: number;
  sealed: string;
}

export interface HooksReadTables {
  hooks: HooksTable;
  hooks_stream_versions: StreamVersionsTable;
  hook_secrets: HookSecretsTable;
}

export type HookRow = Selectable<HooksTable>;

declare module '../../database/database.js' {
  interface Database extends HooksReadTables {}
}
