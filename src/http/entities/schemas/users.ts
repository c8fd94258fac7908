import { arrayOf, bool, date, dateTime, entity, extend, int, nullable, object, ref, str } from './dsl.js';

/** Entities::CustomAttribute. */
export const CustomAttribute = entity('Entities::CustomAttribute.', { key: str, value: str });

/** Entities::UserBasic: also the user embedded as an author, an assignee… */
export const UserBasic = entity(
  'Entities::UserBasic (`custom_attributes` for an administrator asking `with_custom_attributes`).',
  {
    id: int,
    name: str,
    username: str,
    state: str,
    avatar_url: nullable(str),
    custom_attributes: arrayOf(ref('CustomAttribute')),
    web_url: str,
  },
  ['custom_attributes'],
);

/** Entities::User: `created_at` for those who may read the user's profile. */
export const User = extend(
  UserBasic,
  "Entities::User (`created_at` for those who may read the user's profile).",
  {
    created_at: dateTime,
    bio: str,
    location: str,
    public_email: str,
    skype: str,
    linkedin: str,
    twitter: str,
    website_url: str,
    organization: str,
  },
  ['created_at'],
);

/** Entities::UserPublic: the caller's own view; EE's minutes limits under a paid licence. */
export const UserPublic = extend(
  User,
  "Entities::UserPublic: the caller's own view (EE's minutes limits under a paid licence).",
  {
    last_sign_in_at: nullable(dateTime),
    confirmed_at: nullable(dateTime),
    last_activity_on: nullable(str),
    email: str,
    theme_id: int,
    color_scheme_id: int,
    projects_limit: int,
    current_sign_in_at: nullable(dateTime),
    identities: arrayOf(object({ provider: str, extern_uid: str })),
    can_create_group: bool,
    can_create_project: bool,
    two_factor_enabled: bool,
    external: bool,
    private_profile: bool,
    shared_runners_minutes_limit: nullable(int),
    extra_shared_runners_minutes_limit: nullable(int),
  },
  ['shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit'],
);

/** Entities::UserWithAdmin: what administrators see. */
export const UserWithAdmin = extend(
  UserPublic,
  'Entities::UserWithAdmin: what administrators see (EE: the minutes limits after `is_admin`, then `note`).',
  { is_admin: bool, shared_runners_minutes_limit: nullable(int), extra_shared_runners_minutes_limit: nullable(int), note: nullable(str) },
  ['shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit', 'note'],
);

export const UserStatus = entity('Entities::UserStatus (emoji and message null without a status).', { emoji: nullable(str), message: nullable(str), message_html: str });

export const ImpersonationToken = entity('Entities::ImpersonationToken (`token` right after creation only).', {
  id: int,
  name: str,
  revoked: bool,
  created_at: dateTime,
  scopes: arrayOf(str),
  active: bool,
  expires_at: nullable(date),
  token: str,
  impersonation: bool,
}, ['token']);

export const PersonalAccessToken = entity('Entities::PersonalAccessToken (`token` right after creation only).', {
  id: int,
  name: str,
  revoked: bool,
  created_at: dateTime,
  scopes: arrayOf(str),
  user_id: int,
  active: bool,
  expires_at: nullable(date),
  token: str,
}, ['token']);
