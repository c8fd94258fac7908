import type { ProfileChanges, UserProfile } from '../../../domain/users.js';
import type { UserRow } from '../../../projections/users.js';
import { optional, t, withDefault } from '../../kernel/params.js';

// ───────────────────────────── Parameters ─────────────────────────────

// GitLab 12 (lib/api/users.rb): params :optional_attributes, shared by create and update.
export const optionalAttributes = {
  skype: optional(t.string()),
  linkedin: optional(t.string()),
  twitter: optional(t.string()),
  website_url: optional(t.string()),
  organization: optional(t.string()),
  projects_limit: optional(t.integer()),
  extern_uid: optional(t.string()),
  provider: optional(t.string()),
  bio: optional(t.string()),
  location: optional(t.string()),
  public_email: optional(t.string()),
  admin: optional(t.boolean()),
  can_create_group: optional(t.boolean()),
  external: optional(t.boolean()),
  avatar: optional(t.file()),
  private_profile: optional(t.boolean()),
};

// EE's optional_params_ee (applied on paid tiers only).
export const eeAttributes = {
  shared_runners_minutes_limit: optional(t.integer()),
  extra_shared_runners_minutes_limit: optional(t.integer()),
  group_id_for_saml: optional(t.integer()),
  note: optional(t.string()),
};

export const listParams = {
  username: optional(t.string()),
  extern_uid: optional(t.string()),
  provider: optional(t.string()),
  search: optional(t.string()),
  active: withDefault(t.boolean(), false),
  external: withDefault(t.boolean(), false),
  blocked: withDefault(t.boolean(), false),
  created_after: optional(t.datetime()),
  created_before: optional(t.datetime()),
  order_by: withDefault(t.values(['id', 'name', 'username', 'created_at', 'updated_at']), 'id'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
  with_custom_attributes: withDefault(t.boolean(), false),
};

type ProfileInput = Record<string, unknown>;

/** Maps GitLab's request fields onto the profile (admin → is_admin, extern_uid+provider → identities). */
export function profileChanges(input: ProfileInput, current: UserRow | undefined, paidTier: boolean): ProfileChanges {
  const changes: Record<string, unknown> = {};
  const fields: (keyof UserProfile)[] = [
    'name', 'username', 'email', 'skype', 'linkedin', 'twitter', 'website_url', 'organization', 'bio', 'location',
    'public_email', 'projects_limit', 'can_create_group', 'external', 'private_profile',
  ];
  for (const field of fields) if (input[field] !== undefined) changes[field] = input[field];
  if (input.admin !== undefined) changes.is_admin = input.admin;
  if (paidTier) {
    for (const field of ['note', 'shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit'] as const) {
      if (input[field] !== undefined) changes[field] = input[field];
    }
  }
  // GitLab: an identity of the same provider gets the new extern_uid, otherwise one is added.
  if (typeof input.extern_uid === 'string' && typeof input.provider === 'string') {
    const identities = (current?.identities ?? []).filter((identity) => identity.provider !== input.provider);
    changes.identities = [...identities, { provider: input.provider, extern_uid: input.extern_uid }];
  }
  return changes as ProfileChanges;
}

