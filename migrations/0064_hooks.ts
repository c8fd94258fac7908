import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Webhooks (GitLab's `web_hooks`: ProjectHook, GroupHook, SystemHook in one table, `kind`
// telling them apart): the hooks projection's `hooks` and `hooks_stream_versions`, and
// `hook_secrets` — the hooks' tokens sealed under the instance key `hooks` made here, written
// by the commands in their transaction (not a projection: the log never holds a token).
// A hook's deliveries go to `integration_deliveries` (0027), which now takes either an
// integration or a hook: `hook_id` set and `integration_id` null, and `project_id` null for
// what a system hook is told of no project (a user created).
const statements = [
  `create sequence hooks_id_seq`,
  `create table hooks (
    id integer primary key,
    kind text not null check (kind in ('project', 'group', 'system')),
    project_id integer,
    group_id integer,
    url text not null,
    push_events boolean not null,
    push_events_branch_filter text,
    issues_events boolean not null,
    confidential_issues_events boolean not null,
    merge_requests_events boolean not null,
    tag_push_events boolean not null,
    note_events boolean not null,
    confidential_note_events boolean,
    job_events boolean not null,
    pipeline_events boolean not null,
    wiki_page_events boolean not null,
    repository_update_events boolean not null,
    enable_ssl_verification boolean not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index hooks_project on hooks (project_id, id) where project_id is not null`,
  `create index hooks_group on hooks (group_id, id) where group_id is not null`,
  `create table hooks_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
  `create table hook_secrets (
    hook_id integer primary key,
    sealed text not null
  )`,
  `alter table integration_deliveries alter column integration_id drop not null`,
  `alter table integration_deliveries alter column project_id drop not null`,
  `alter table integration_deliveries add column hook_id integer`,
  `alter table integration_deliveries add constraint integration_deliveries_one_target check ((integration_id is null) <> (hook_id is null))`,
  `create unique index integration_deliveries_hook_event on integration_deliveries (hook_id, event_id, seq) where hook_id is not null`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  // AES-256-GCM and fingerprint key of the hooks' tokens (src/security/sealing.ts).
  await sql`insert into instance_keys (name, secret) values ('hooks', ${randomBytes(32).toString('hex')}) on conflict (name) do nothing`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('delete from integration_deliveries where hook_id is not null').execute(db);
  await sql.raw('drop index if exists integration_deliveries_hook_event').execute(db);
  await sql.raw('alter table integration_deliveries drop constraint if exists integration_deliveries_one_target').execute(db);
  await sql.raw('alter table integration_deliveries drop column if exists hook_id').execute(db);
  await sql.raw('alter table integration_deliveries alter column project_id set not null').execute(db);
  await sql.raw('alter table integration_deliveries alter column integration_id set not null').execute(db);
  for (const table of ['hook_secrets', 'hooks_stream_versions', 'hooks']) await sql.raw(`drop table if exists ${table}`).execute(db);
  await sql.raw('drop sequence if exists hooks_id_seq').execute(db);
  await sql`delete from instance_keys where name = 'hooks'`.execute(db);
}
