import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The user SSH keys projection's tables: users' keys (GitLab's keys of type nil). Their ids
// come from deploy_keys_id_seq (0020), as GitLab's keys table gives both kinds one sequence.
const statements = [
  `create table user_ssh_keys (
    id integer primary key,
    user_id integer not null,
    title text not null,
    key text not null,
    fingerprint text not null,
    fingerprint_sha256 text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index user_ssh_keys_user on user_ssh_keys (user_id, id)`,
  `create index user_ssh_keys_fingerprint on user_ssh_keys (fingerprint)`,
  `create index user_ssh_keys_fingerprint_sha256 on user_ssh_keys (fingerprint_sha256)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table user_ssh_keys_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['user_ssh_keys_stream_versions', 'user_ssh_keys']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
