import type { ColumnType, Selectable } from 'kysely';
import type { Properties } from '../../domain/integrations/catalogue.js';
import type { StreamVersionsTable } from '../stream-versions.js';

type Timestamp = ColumnType<Date, string, string>;

export interface IntegrationsTable {
  id: number;
  project_id: number;
  /** The slug (`slack`, `drone-ci` …). */
  kind: string;
  active: boolean;
  commit_events: boolean;
  push_events: boolean;
  issues_events: boolean;
  confidential_issues_events: boolean;
  merge_requests_events: boolean;
  tag_push_events: boolean;
  note_events: boolean;
  confidential_note_events: boolean;
  pipeline_events: boolean;
  wiki_page_events: boolean;
  job_events: boolean;
  comment_on_event_enabled: boolean;
  /** The non-secret properties (secrets: integration_secrets). */
  properties: ColumnType<Properties, string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Written by the integrations' commands in their transaction, never by a projector: the sealed secrets. */
export interface IntegrationSecretsTable {
  project_id: number;
  kind: string;
  field: string;
  sealed: string;
}

export interface IntegrationsReadTables {
  integrations: IntegrationsTable;
  integrations_stream_versions: StreamVersionsTable;
  integration_secrets: IntegrationSecretsTable;
}

export type IntegrationRow = Selectable<IntegrationsTable>;
