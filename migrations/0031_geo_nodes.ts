import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The geo_nodes projection's tables, and the Geo tables kept outside the log: the statuses
// secondaries report to the primary, and a secondary's replication cursor and failures.
const statements = [
  `create sequence geo_nodes_id_seq`,
  `create table geo_nodes (
    id integer primary key,
    name text not null,
    url text not null,
    internal_url text,
    "primary" boolean not null,
    enabled boolean not null,
    files_max_capacity integer not null,
    repos_max_capacity integer not null,
    verification_max_capacity integer not null,
    container_repositories_max_capacity integer not null,
    sync_object_storage boolean not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create table geo_nodes_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
  // On the primary: the last status each secondary posted (GitLab's geo_node_statuses).
  `create table geo_node_statuses (
    geo_node_id integer primary key,
    status jsonb not null,
    received_at timestamptz not null
  )`,
  // On a secondary: how far it has applied the primary's log (one row), and what it last
  // learnt of the primary's head.
  `create table geo_replication_cursor (
    id integer primary key check (id = 1),
    transaction_id text not null,
    global_position bigint not null,
    last_event_id bigint,
    last_event_at timestamptz,
    primary_last_event_id bigint,
    primary_last_event_at timestamptz,
    polled_at timestamptz,
    poll_error text
  )`,
  // On a secondary: the primary's events it could not apply (by their position there).
  `create table geo_event_failures (
    global_position bigint primary key,
    stream_id text not null,
    event_type text not null,
    project_id integer,
    failure_type text not null check (failure_type in ('sync', 'verification')),
    checksum_mismatch boolean not null,
    event_hash text not null,
    message text not null,
    retry_count integer not null,
    first_failed_at timestamptz not null,
    last_failed_at timestamptz not null
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['geo_event_failures', 'geo_replication_cursor', 'geo_node_statuses', 'geo_nodes_stream_versions', 'geo_nodes']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists geo_nodes_id_seq').execute(db);
}
