import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The integrations projection (GitLab's `services` of projects): one row per project and
// kind, its event flags as columns, its non-secret properties as jsonb. The secrets live in
// `integration_secrets`, written by the commands (not a projection: the log never holds
// them), sealed under the instance key `integrations` made here.
const statements = [
  `create sequence integrations_id_seq`,
  `create table integrations (
    id integer primary key,
    project_id integer not null,
    kind text not null,
    active boolean not null,
    commit_events boolean not null,
    push_events boolean not null,
    issues_events boolean not null,
    confidential_issues_events boolean not null,
    merge_requests_events boolean not null,
    tag_push_events boolean not null,
    note_events boolean not null,
    confidential_note_events boolean not null,
    pipeline_events boolean not null,
    wiki_page_events boolean not null,
    job_events boolean not null,
    comment_on_event_enabled boolean not null,
    properties jsonb not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create unique index integrations_project_kind on integrations (project_id, kind)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table integrations_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
  `create table integration_secrets (
    project_id integer not null,
    kind text not null,
    field text not null,
    sealed text not null,
    primary key (project_id, kind, field)
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  // AES-256-GCM and fingerprint key of the integrations' secrets (src/commands/sealing.ts).
  await sql`insert into instance_keys (name, secret) values ('integrations', ${randomBytes(32).toString('hex')}) on conflict (name) do nothing`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['integration_secrets', 'integrations_stream_versions', 'integrations']) await sql.raw(`drop table if exists ${table}`).execute(db);
  await sql.raw('drop sequence if exists integrations_id_seq').execute(db);
}
