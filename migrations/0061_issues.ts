import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The issues projection's tables: one row per issue (its assignees and label ids as arrays in
// GitLab's order, the time tracking totals, the closer, the move), explicit subscriptions,
// and each project's last issue iid.
// user_notes_count, upvotes and downvotes are kept by the notes and award emoji areas.
const statements = [
  `create sequence issues_id_seq`,
  `create table issues (
    id integer primary key,
    project_id integer not null,
    iid integer not null,
    author_id integer not null,
    title text not null,
    description text,
    state text not null,
    assignee_ids integer[] not null default '{}',
    label_ids integer[] not null default '{}',
    milestone_id integer,
    due_date text,
    confidential boolean not null default false,
    discussion_locked boolean,
    weight integer,
    relative_position integer,
    moved_to_id integer,
    moved_from_id integer,
    closed_by_id integer,
    closed_at timestamptz,
    time_estimate integer not null default 0,
    total_time_spent integer not null default 0,
    user_notes_count integer not null default 0,
    upvotes integer not null default 0,
    downvotes integer not null default 0,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (project_id, iid)
  )`,
  `create index issues_project_created on issues (project_id, created_at desc, id desc)`,
  `create index issues_project_state_created on issues (project_id, state, created_at desc, id desc)`,
  `create index issues_author on issues (author_id, created_at desc)`,
  `create index issues_created on issues (created_at desc, id desc)`,
  `create index issues_assignees on issues using gin (assignee_ids)`,
  `create index issues_labels on issues using gin (label_ids)`,
  `create index issues_milestone on issues (milestone_id)`,
  `create table issue_subscriptions (
    issue_id integer not null,
    user_id integer not null,
    subscribed boolean not null,
    primary key (issue_id, user_id)
  )`,
  // The last iid each project handed out: GitLab's InternalId, never reused after a deletion.
  `create table issue_iids (project_id integer primary key, last_iid integer not null)`,
  `create table issues_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['issues_stream_versions', 'issue_iids', 'issue_subscriptions', 'issues']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists issues_id_seq').execute(db);
}
