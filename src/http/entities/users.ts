import type { Config } from '../../config.js';
import type { TokenRow, UserRow } from '../../projections/users.js';

/** GitLab timestamps: ISO 8601 UTC with milliseconds. */
export const iso = (date: Date | null) => (date ? date.toISOString() : null);

export const userWebUrl = (config: Config, username: string) => `${config.externalUrl}/${username}`;

/** Entities::UserBasic — also the user reference embedded as author, assignee, … */
export function toUserBasic(row: UserRow, config: Config) {
  return {
    id: row.id,
    name: row.name,
    username: row.username,
    state: row.state,
    avatar_url: row.avatar_url,
    web_url: userWebUrl(config, row.username),
  };
}

/** Entities::User — the single-user view for non-admins. */
export function toUser(row: UserRow, config: Config) {
  return {
    ...toUserBasic(row, config),
    created_at: iso(row.created_at),
    bio: row.bio,
    location: row.location,
    public_email: row.public_email,
    skype: row.skype,
    linkedin: row.linkedin,
    twitter: row.twitter,
    website_url: row.website_url,
    organization: row.organization,
  };
}

/** Entities::UserPublic — the current user's own view. */
export function toUserPublic(row: UserRow, config: Config) {
  return {
    ...toUser(row, config),
    last_sign_in_at: iso(row.last_sign_in_at),
    confirmed_at: iso(row.confirmed_at),
    last_activity_on: row.last_activity_on,
    email: row.email,
    theme_id: row.theme_id,
    color_scheme_id: row.color_scheme_id,
    projects_limit: row.projects_limit,
    current_sign_in_at: iso(row.current_sign_in_at),
    identities: row.identities.map((identity) => ({ provider: identity.provider, extern_uid: identity.extern_uid })),
    can_create_group: row.can_create_group,
    can_create_project: row.projects_limit > 0,
    two_factor_enabled: row.two_factor_enabled,
    external: row.external,
    private_profile: row.private_profile,
  };
}

/** Entities::UserWithAdmin — what administrators see. Paid tiers add the minutes limits and the note. */
export function toUserWithAdmin(row: UserRow, config: Config) {
  const paid = config.plan !== 'free';
  return {
    ...toUserPublic(row, config),
    is_admin: row.is_admin,
    ...(paid
      ? {
          note: row.note,
          shared_runners_minutes_limit: row.shared_runners_minutes_limit,
          extra_shared_runners_minutes_limit: row.extra_shared_runners_minutes_limit,
        }
      : {}),
  };
}

export function toUserStatus(row: UserRow) {
  return {
    emoji: row.status_emoji,
    message: row.status_message,
    message_html: row.status_message_html,
  };
}

/** Entities::PersonalAccessToken, or ImpersonationToken (adds `impersonation`); `token` only right after creation. */
export function toAccessToken(row: TokenRow, today: string, token?: string) {
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked,
    created_at: iso(row.created_at),
    scopes: row.scopes,
    active: !row.revoked && (row.expires_at === null || row.expires_at > today),
    expires_at: row.expires_at,
    ...(row.impersonation ? { impersonation: true } : {}),
    ...(token === undefined ? {} : { token }),
  };
}
