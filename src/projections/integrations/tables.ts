import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Properties } from '../../domain/integrations/catalogue.js';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


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

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'recorded';

/**
 * Written by the `integration-deliveries` reactor and the delivery sender, never by a
 * projector (migration 0027): one request an integration makes for an event. Operational
 * state, not rebuilt; no secret (the webhook URL is read when sending).
 */
export interface IntegrationDeliveriesTable {
  id: Generated<string>;
  /** The integration that sends it, or null for a webhook's (migration 0064). */
  integration_id: number | null;
  /** The webhook that sends it (src/commands/hook-deliveries.ts), or null for an integration's. */
  hook_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Null for what a system hook is told of no project. */
  project_id: number | null;
  /** An integration's slug, or a hook's kind (`project_hook`, `group_hook`, `system_hook`). */
  kind: string;
  event_id: string;
  event_type: string;
  flag: string;
  /** 0, or the channel's position when one message goes to several Slack channels. */
  seq: number;
  /** The request body as JSON (chat kinds), or the message (kinds that only record). */
  payload: ColumnType<unknown, string, string>;
  status: DeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  last_attempt_at: Timestamp | null;
  response_status: number | null;
  last_error: string | null;
  created_at: Timestamp;
}

export interface IntegrationsReadTables {
  integrations: IntegrationsTable;
  integrations_stream_versions: StreamVersionsTable;
  integration_secrets: IntegrationSecretsTable;
  integration_deliveries: IntegrationDeliveriesTable;
}

export type IntegrationDeliveryRow = Selectable<IntegrationDeliveriesTable>;

export type IntegrationRow = Selectable<IntegrationsTable>;

declare module '../../database/database.js' {
  interface Database extends IntegrationsReadTables {}
}
