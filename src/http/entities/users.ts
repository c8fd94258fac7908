import type { Config } from '../../config.js';
import { licensed } from '../../domain/policy/licensed.js';
import { canReadUserProfile } from '../../domain/policy/user.js';
import type { CustomAttributeRow, TokenRow, UserRow } from '../../projections/users.js';
import { avatarUrl } from '../../projections/users/avatar.js';

/** GitLab timestamps: ISO 8601 UTC with milliseconds. */
export const iso = (date: Date | null) => (date ? date.toISOString() : null);

export const userWebUrl = (config: Config, username: string) => `${config.externalUrl}/${username}`;

/** What a view may add: the caller (for conditional fields) and custom attributes (admins' with_custom_attributes). */
export interface UserViewOptions {
  /** The caller, when a field depends on who asks (User#created_at). */
  readonly viewer?: Pick<UserRow, 'id' | 'is_admin'> | null;
  /** Present only when requested by an administrator; exposed after avatar_url as GitLab does. */
  readonly customAttributes?: readonly CustomAttributeRow[] | undefined;
}

/** Entities::CustomAttribute */
export const toCustomAttribute = (row: Pick<CustomAttributeRow, 'key' | 'value'>) => ({ key: row.key, value: row.value });

// The views nest like GitLab's entity classes (UserBasic < User < UserPublic < UserWithAdmin).
// Fast path (not a pattern to copy; an entity is a literal in GitLab's field order): each
// level writes its fields into one object, since building each level as a literal and
// spreading it into the next cost 10–25 µs per user, the most expensive part of a GET.
type Fields = Record<string, unknown>;

/** Entities::UserBasic — also the user reference embedded as author, assignee, … */
export function toUserBasic(row: UserReferenceRow, config: Config, options: UserViewOptions = {}): Fields {
  return putBasic({}, row, config, options);
}

/** The columns a user reference is made of. */
export type UserReferenceRow = Pick<UserRow, 'id' | 'name' | 'username' | 'state' | 'avatar_url' | 'email'>;

function putBasic(out: Fields, row: UserReferenceRow, config: Config, options: UserViewOptions): Fields {
  out.id = row.id;
  out.name = row.name;
  out.username = row.username;
  out.state = row.state;
  out.avatar_url = avatarUrl(row, config.externalUrl);
  if (options.customAttributes) out.custom_attributes = options.customAttributes.map(toCustomAttribute);
  out.web_url = userWebUrl(config, row.username);
  return out;
}

/** GitLab's UserPolicy :read_user_profile (Entities::User#created_at depends on it). */
const canReadProfile = (row: UserRow, viewer: UserViewOptions['viewer']) => canReadUserProfile(row, viewer ? { id: viewer.id, isAdmin: viewer.is_admin } : null);

/** Entities::User — the single-user view for non-admins. */
export function toUser(row: UserRow, config: Config, options: UserViewOptions = {}): Fields {
  return putUser({}, row, config, options);
}

function putUser(out: Fields, row: UserRow, config: Config, options: UserViewOptions): Fields {
  putBasic(out, row, config, options);
  if (canReadProfile(row, options.viewer)) out.created_at = iso(row.created_at);
  out.bio = row.bio;
  out.location = row.location;
  out.public_email = row.public_email;
  out.skype = row.skype;
  out.linkedin = row.linkedin;
  out.twitter = row.twitter;
  out.website_url = row.website_url;
  out.organization = row.organization;
  return out;
}

/** The fields Entities::UserPublic adds to Entities::User (the current user's own view). */
function putPublic(out: Fields, row: UserRow, config: Config, options: UserViewOptions): Fields {
  putUser(out, row, config, options);
  out.last_sign_in_at = iso(row.last_sign_in_at);
  out.confirmed_at = iso(row.confirmed_at);
  out.last_activity_on = row.last_activity_on;
  out.email = row.email;
  out.theme_id = row.theme_id;
  out.color_scheme_id = row.color_scheme_id;
  out.projects_limit = row.projects_limit;
  out.current_sign_in_at = iso(row.current_sign_in_at);
  out.identities = row.identities.map((identity) => ({ provider: identity.provider, extern_uid: identity.extern_uid }));
  out.can_create_group = row.can_create_group;
  out.can_create_project = row.projects_limit > 0;
  out.two_factor_enabled = row.two_factor_enabled;
  out.external = row.external;
  out.private_profile = row.private_profile;
  return out;
}

/** EE (paid tiers): the pipeline minutes limits, prepended to UserPublic and its descendants. */
function putMinutesLimits(out: Fields, row: UserRow, config: Config): Fields {
  if (licensed(config.plan, 'ee')) {
    out.shared_runners_minutes_limit = row.shared_runners_minutes_limit;
    out.extra_shared_runners_minutes_limit = row.extra_shared_runners_minutes_limit;
  }
  return out;
}

/** Entities::UserPublic — the current user's own view (GET /user for non-admins). */
export function toUserPublic(row: UserRow, config: Config, options: UserViewOptions = {}): Fields {
  const out = putPublic({}, row, config, { ...options, viewer: options.viewer ?? row });
  return putMinutesLimits(out, row, config);
}

/**
 * Entities::UserWithAdmin — what administrators see. EE prepends the minutes limits to every
 * descendant of UserPublic, so here they follow is_admin; then EE's admin note.
 */
export function toUserWithAdmin(row: UserRow, config: Config, options: UserViewOptions = {}): Fields {
  const out = putPublic({}, row, config, { ...options, viewer: options.viewer ?? { id: row.id, is_admin: true } });
  out.is_admin = row.is_admin;
  putMinutesLimits(out, row, config);
  if (licensed(config.plan, 'ee')) out.note = row.note;
  return out;
}

/**
 * Entities::UserStatus. Without a status GitLab presents `{}`: emoji and message null and
 * message_html "" (MarkupHelper.markdown_field of a blank object).
 */
export function toUserStatus(row: Pick<UserRow, 'status_emoji' | 'status_message' | 'status_message_html'>) {
  if (row.status_emoji === null) return { emoji: null, message: null, message_html: '' };
  return {
    emoji: row.status_emoji,
    message: row.status_message,
    message_html: row.status_message_html ?? '',
  };
}

const tokenActive = (row: TokenRow, today: string) => !row.revoked && (row.expires_at === null || row.expires_at > today);

/** Entities::ImpersonationToken; `token` (ImpersonationTokenWithToken) only right after creation, before `impersonation`. */
export function toImpersonationToken(row: TokenRow, today: string, token?: string) {
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked,
    created_at: iso(row.created_at),
    scopes: row.scopes,
    active: tokenActive(row, today),
    expires_at: row.expires_at,
    ...(token === undefined ? {} : { token }),
    impersonation: row.impersonation,
  };
}

/** Entities::PersonalAccessTokenWithToken (GitLab 13.6's POST /users/:user_id/personal_access_tokens). */
export function toPersonalAccessToken(row: TokenRow, today: string, token?: string) {
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked,
    created_at: iso(row.created_at),
    scopes: row.scopes,
    user_id: row.user_id,
    active: tokenActive(row, today),
    expires_at: row.expires_at,
    ...(token === undefined ? {} : { token }),
  };
}
