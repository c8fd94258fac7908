import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The users projection's tables: users, their personal access tokens and custom attributes.
const statements = [
  // Integer ids are allocated at command time and carried in creation events.
  `create sequence users_id_seq`,
  `create sequence personal_access_tokens_id_seq`,
  `create table users (
    id integer primary key,
    username text not null,
    email text not null,
    name text not null,
    state text not null default 'active',
    is_admin boolean not null default false,
    can_create_group boolean not null default true,
    projects_limit integer not null default 100000,
    external boolean not null default false,
    private_profile boolean not null default false,
    bio text not null default '',
    location text not null default '',
    public_email text not null default '',
    skype text not null default '',
    linkedin text not null default '',
    twitter text not null default '',
    website_url text not null default '',
    organization text not null default '',
    theme_id integer not null default 1,
    color_scheme_id integer not null default 1,
    note text,
    shared_runners_minutes_limit integer,
    extra_shared_runners_minutes_limit integer,
    identities jsonb not null default '[]',
    avatar_url text,
    two_factor_enabled boolean not null default false,
    confirmed_at timestamptz,
    password_expires_at timestamptz,
    last_sign_in_at timestamptz,
    current_sign_in_at timestamptz,
    last_activity_on date,
    status_emoji text,
    status_message text,
    status_message_html text,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    stream_version integer not null
  )`,
  `create unique index users_username_lower on users (lower(username))`,
  `create unique index users_email_lower on users (lower(email))`,
  `create index users_created_at on users (created_at)`,
  `create table personal_access_tokens (
    id integer primary key,
    user_id integer not null,
    name text not null,
    token_digest text not null,
    scopes text[] not null,
    impersonation boolean not null default false,
    revoked boolean not null default false,
    expires_at date,
    created_at timestamptz not null
  )`,
  `create unique index personal_access_tokens_digest on personal_access_tokens (token_digest)`,
  `create index personal_access_tokens_user on personal_access_tokens (user_id)`,
  // GitLab's user_custom_attributes: admin-only key/value pairs on a user, one value per key.
  `create table user_custom_attributes (
    user_id integer not null,
    key text not null,
    value text not null,
    created_version integer not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    stream_version integer not null,
    primary key (user_id, key)
  )`,
  // GET /users?custom_attributes[key]=value
  `create index user_custom_attributes_key_value on user_custom_attributes (key, value)`,
  // The last applied version of each stream (README.md, "Stream versions").
  `create table users_stream_versions (stream_id text primary key, version integer not null check (version > 0))`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['users_stream_versions', 'user_custom_attributes', 'personal_access_tokens', 'users']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
  await sql.raw('drop sequence if exists users_id_seq, personal_access_tokens_id_seq').execute(db);
}
