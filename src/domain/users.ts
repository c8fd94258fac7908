import { z } from 'zod';
import type { EventOf, EventSchemas, Upcasters } from './events.js';
import { invalid } from './errors.js';
import { uploadRef } from './uploads.js';

/**
 * Users: one aggregate per user, stream `user-<id>`, holding the profile, password, state,
 * status, personal access tokens and custom attributes. This file is what is stored and
 * what other areas rely on; the rules are in users/ (profile.ts, status.ts, tokens.ts) and
 * the decisions in users/decider.ts.
 */

export const userStreamId = (id: number) => `user-${id}`;

// ───────────────────────────── Profile ─────────────────────────────

const identity = z.strictObject({ provider: z.string(), extern_uid: z.string() });

/** The editable profile fields, named as in GitLab's JSON. */
const profile = z.strictObject({
  name: z.string(),
  username: z.string(),
  email: z.string(),
  skype: z.string(),
  linkedin: z.string(),
  twitter: z.string(),
  website_url: z.string(),
  organization: z.string(),
  bio: z.string(),
  location: z.string(),
  public_email: z.string(),
  projects_limit: z.int(),
  is_admin: z.boolean(),
  can_create_group: z.boolean(),
  external: z.boolean(),
  private_profile: z.boolean(),
  theme_id: z.int(),
  color_scheme_id: z.int(),
  note: z.string().nullable(),
  shared_runners_minutes_limit: z.int().nullable(),
  extra_shared_runners_minutes_limit: z.int().nullable(),
  identities: z.array(identity),
});

export type UserProfile = z.output<typeof profile>;
export type Identity = z.output<typeof identity>;
export type ProfileChanges = Partial<UserProfile>;

/** GitLab 12's Gitlab::Auth.all_available_scopes (registry enabled). */
export const TOKEN_SCOPES = ['api', 'read_user', 'read_api', 'read_repository', 'write_repository', 'read_registry', 'sudo'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

// ───────────────────────────── Events ─────────────────────────────

/** The user's id (a token event's `id` is the token's). */
const id = z.int();

export const userEvents = {
  UserCreated: z.strictObject({
    id,
    /** The user's personal namespace (projects live in a namespace). */
    namespace_id: z.int(),
    ...profile.shape,
    password_hash: z.string().nullable(),
    confirmed: z.boolean(),
    /** GitLab: reset_password / force_random_password; the user must set a password. */
    password_reset_required: z.boolean(),
  }),
  /** `previous_email`: the primary email before, when it changed (the audit shows it); null otherwise and in events stored before schema version 2. */
  UserProfileUpdated: z.strictObject({ id, changes: profile.partial(), previous_email: z.string().nullable() }),
  UserPasswordChanged: z.strictObject({ id, password_hash: z.string(), expires_now: z.boolean() }),
  UserBlocked: z.strictObject({ id }),
  UserUnblocked: z.strictObject({ id }),
  UserDeleted: z.strictObject({ id, hard_delete: z.boolean() }),
  /** `message`: GitLab stores what was sent, null when only an emoji was set. */
  UserStatusSet: z.strictObject({ id, emoji: z.string(), message: z.string().nullable(), message_html: z.string() }),
  UserStatusCleared: z.strictObject({ id }),
  PersonalAccessTokenCreated: z.strictObject({
    id: z.int(),
    user_id: z.int(),
    name: z.string(),
    scopes: z.array(z.enum(TOKEN_SCOPES)),
    expires_at: z.iso.date().nullable(),
    impersonation: z.boolean(),
    /** SHA-256 of the token; the token itself is never stored. */
    token_digest: z.string(),
  }),
  PersonalAccessTokenRevoked: z.strictObject({ id: z.int(), user_id: z.int() }),
  /** GitLab (Devise reconfirmable): a new email waits for confirmation; the primary email is unchanged. */
  UserEmailChangeRequested: z.strictObject({ id, unconfirmed_email: z.string() }),
  /** GitLab's custom attributes (admin-only key/value pairs on a user). */
  UserCustomAttributeSet: z.strictObject({ id, key: z.string(), value: z.string() }),
  UserCustomAttributeDeleted: z.strictObject({ id, key: z.string() }),
  /** GitLab: `avatar` of POST /users and PUT /users/:id; the bytes are in `uploads`, under `avatar.sha256`. */
  UserAvatarChanged: z.strictObject({ id, avatar: uploadRef }),
} satisfies EventSchemas;

export type UserEvent = EventOf<typeof userEvents>;

/**
 * The profile edits a replay through a fixed position may merge, run by run of a user's
 * stream (Projector.mergeRuns): an edit sets only the fields it changes, and no other event of
 * the stream sets a profile field (statuses, blocks, avatars, passwords have columns of their
 * own). A rename (username,
 * name) stays in its place: the personal namespace and its projects' paths follow it, and a
 * mention written meanwhile is resolved against those paths.
 */
export const PROFILE_EDIT_RUNS = { type: 'UserProfileUpdated', field: 'changes', except: ['username', 'name'] } as const;

/** Schema version 2 of UserProfileUpdated added the email before the change; older events did not record it. */
export const userUpcasters: Upcasters<typeof userEvents> = {
  UserProfileUpdated: { 1: (data: object) => ({ ...data, previous_email: null }) },
};

export function userEventIndex(event: UserEvent) {
  const userId = event.type === 'PersonalAccessTokenCreated' || event.type === 'PersonalAccessTokenRevoked' ? event.data.user_id : event.data.id;
  return { targetType: 'User', targetId: userId };
}

// ───────────────────────────── Field rules (shared with other areas) ─────────────────────────────

/** Rails' blank?: nil, empty or only whitespace. */
export const isBlank = (value: string | null | undefined) => value === null || value === undefined || value.trim() === '';

/** A string column of GitLab's (Rails' `string`, 255 characters): longer does not fit a btree index entry either. */
export const STRING_MAXIMUM = 255;
export const tooLong = (maximum: number) => `is too long (maximum is ${maximum} characters)`;

/**
 * GitLab: CustomAttribute validates the presence of key and value. Both are indexed
 * (`key, value`), so both are limited to a string column's 255 characters. Groups' custom
 * attributes follow the same rules.
 */
export function validateCustomAttribute(key: string, value: string): void {
  const errors: Record<string, string[]> = {};
  if (isBlank(key)) errors.key = ["can't be blank"];
  else if (key.length > STRING_MAXIMUM) errors.key = [tooLong(STRING_MAXIMUM)];
  if (isBlank(value)) errors.value = ["can't be blank"];
  else if (value.length > STRING_MAXIMUM) errors.value = [tooLong(STRING_MAXIMUM)];
  if (Object.keys(errors).length > 0) throw invalid(errors);
}
