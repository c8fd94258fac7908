import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The merge requests projection's tables: one row per merge request (its assignees and label
// ids as arrays in GitLab's order, the latest diff version's SHAs, the time tracking totals
// and the last mergeability check), its diff versions, explicit subscriptions, and each
// project's last merge request iid.
const statements = [
  `create sequence merge_requests_id_seq`,
  `create table merge_requests (
    id integer primary key,
    project_id integer not null,
    iid integer not null,
    author_id integer not null,
    title text not null,
    description text,
    state text not null,
    source_project_id integer not null,
    source_branch text not null,
    target_branch text not null,
    assignee_ids integer[] not null default '{}',
    label_ids integer[] not null default '{}',
    milestone_id integer,
    discussion_locked boolean,
    squash boolean not null,
    force_remove_source_branch boolean not null,
    allow_collaboration boolean not null,
    merge_status text not null default 'unchecked',
    head_sha text not null,
    base_sha text,
    start_sha text not null,
    latest_version_id integer not null,
    changes_count integer not null,
    merge_commit_sha text,
    squash_commit_sha text,
    merged_by_id integer,
    merged_at timestamptz,
    closed_by_id integer,
    closed_at timestamptz,
    time_estimate integer not null default 0,
    total_time_spent integer not null default 0,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (project_id, iid)
  )`,
  `create index merge_requests_project_created on merge_requests (project_id, created_at desc, id desc)`,
  `create index merge_requests_project_state_created on merge_requests (project_id, state, created_at desc, id desc)`,
  `create index merge_requests_author on merge_requests (author_id, created_at desc)`,
  `create index merge_requests_created on merge_requests (created_at desc, id desc)`,
  `create index merge_requests_project_source on merge_requests (project_id, source_branch)`,
  `create index merge_requests_project_target on merge_requests (project_id, target_branch)`,
  `create index merge_requests_assignees on merge_requests using gin (assignee_ids)`,
  `create index merge_requests_labels on merge_requests using gin (label_ids)`,
  `create index merge_requests_milestone on merge_requests (milestone_id)`,
  `create table merge_request_versions (
    id integer primary key,
    merge_request_id integer not null,
    head_commit_sha text not null,
    base_commit_sha text,
    start_commit_sha text not null,
    commit_shas text[] not null,
    files_count integer not null,
    created_at timestamptz not null
  )`,
  `create index merge_request_versions_mr on merge_request_versions (merge_request_id, id desc)`,
  `create sequence merge_request_versions_id_seq`,
  `create table merge_request_subscriptions (
    merge_request_id integer not null,
    user_id integer not null,
    subscribed boolean not null,
    primary key (merge_request_id, user_id)
  )`,
  // The last iid each project handed out: GitLab's InternalId, never reused after a deletion.
  `create table merge_request_iids (project_id integer primary key, last_iid integer not null)`,
  `create table merge_requests_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['merge_requests_stream_versions', 'merge_request_iids', 'merge_request_subscriptions', 'merge_request_versions', 'merge_requests']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  for (const sequence of ['merge_request_versions_id_seq', 'merge_requests_id_seq']) await sql.raw(`drop sequence if exists ${sequence}`).execute(db);
}
