import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The protected branches projection's tables: protected branches and their access-level rules.
const statements = [
  `create sequence protected_branches_id_seq`,
  `create table protected_branches (
    id integer primary key,
    project_id integer not null,
    name text not null,
    code_owner_approval_required boolean not null default false,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (project_id, name)
  )`,
  // One row per rule: kind 'merge', 'push' or 'unprotect'; a role (user_id and group_id null), a user or a group.
  `create table protected_branch_access_levels (
    protected_branch_id integer not null,
    kind text not null,
    position integer not null,
    access_level integer not null,
    user_id integer,
    group_id integer,
    primary key (protected_branch_id, kind, position)
  )`,
  `create index protected_branch_access_levels_user on protected_branch_access_levels (user_id) where user_id is not null`,
  `create index protected_branch_access_levels_group on protected_branch_access_levels (group_id) where group_id is not null`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table protected_branches_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['protected_branches_stream_versions', 'protected_branch_access_levels', 'protected_branches']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists protected_branches_id_seq').execute(db);
}
