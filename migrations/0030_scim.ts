import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The scim projection's tables: the SAML SSO settings, the SCIM token digest and the SAML
// identities of top-level groups.
const statements = [
  `create sequence group_saml_identities_id_seq`,
  `create table saml_providers (
    group_id integer primary key,
    enabled boolean not null,
    sso_url text not null,
    certificate_fingerprint text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  // One token per group; its SHA-256 digest only.
  `create table scim_oauth_access_tokens (
    group_id integer primary key,
    token_digest text not null unique,
    created_at timestamptz not null
  )`,
  `create table group_saml_identities (
    id integer primary key,
    group_id integer not null,
    user_id integer not null,
    extern_uid text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create unique index group_saml_identities_uid on group_saml_identities (group_id, lower(extern_uid))`,
  `create index group_saml_identities_group on group_saml_identities (group_id, id)`,
  `create index group_saml_identities_user on group_saml_identities (user_id)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table scim_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['scim_stream_versions', 'group_saml_identities', 'scim_oauth_access_tokens', 'saml_providers']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists group_saml_identities_id_seq').execute(db);
}
