import { type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { badRequest, conflict, invalid, notFound, recordNotFound } from './errors.js';

// ───────────────────────────── Profile ─────────────────────────────

/** The editable profile fields, named as in GitLab's JSON. */
export interface UserProfile {
  readonly name: string;
  readonly username: string;
  readonly email: string;
  readonly skype: string;
  readonly linkedin: string;
  readonly twitter: string;
  readonly website_url: string;
  readonly organization: string;
  readonly bio: string;
  readonly location: string;
  readonly public_email: string;
  readonly projects_limit: number;
  readonly is_admin: boolean;
  readonly can_create_group: boolean;
  readonly external: boolean;
  readonly private_profile: boolean;
  readonly theme_id: number;
  readonly color_scheme_id: number;
  readonly note: string | null;
  readonly shared_runners_minutes_limit: number | null;
  readonly extra_shared_runners_minutes_limit: number | null;
  readonly identities: readonly Identity[];
}

export interface Identity {
  readonly provider: string;
  readonly extern_uid: string;
}

export type ProfileChanges = Partial<UserProfile>;

/** GitLab 12's Gitlab::Auth.all_available_scopes (registry enabled). */
export const TOKEN_SCOPES = ['api', 'read_user', 'read_api', 'read_repository', 'write_repository', 'read_registry', 'sudo'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface UserStatus {
  readonly emoji: string;
  /** GitLab stores what was sent: null when only an emoji was set. */
  readonly message: string | null;
  readonly message_html: string;
}

export interface TokenRecord {
  readonly id: number;
  readonly name: string;
  readonly scopes: readonly TokenScope[];
  readonly expires_at: string | null;
  readonly impersonation: boolean;
  readonly revoked: boolean;
}

// ───────────────────────────── Events ─────────────────────────────

export type UserEvent =
  | {
      readonly type: 'UserCreated';
      readonly data: UserProfile & {
        readonly id: number;
        /** The user's personal namespace (projects live in a namespace). */
        readonly namespace_id: number;
        readonly password_hash: string | null;
        readonly confirmed: boolean;
        /** GitLab: reset_password / force_random_password; the user must set a password. */
        readonly password_reset_required: boolean;
      };
    }
  | { readonly type: 'UserProfileUpdated'; readonly data: { readonly id: number; readonly changes: ProfileChanges } }
  | { readonly type: 'UserPasswordChanged'; readonly data: { readonly id: number; readonly password_hash: string; readonly expires_now: boolean } }
  | { readonly type: 'UserBlocked'; readonly data: { readonly id: number } }
  | { readonly type: 'UserUnblocked'; readonly data: { readonly id: number } }
  | { readonly type: 'UserDeleted'; readonly data: { readonly id: number; readonly hard_delete: boolean } }
  | { readonly type: 'UserStatusSet'; readonly data: { readonly id: number } & UserStatus }
  | { readonly type: 'UserStatusCleared'; readonly data: { readonly id: number } }
  | {
      readonly type: 'PersonalAccessTokenCreated';
      readonly data: {
        readonly id: number;
        readonly user_id: number;
        readonly name: string;
        readonly scopes: readonly TokenScope[];
        readonly expires_at: string | null;
        readonly impersonation: boolean;
        /** SHA-256 of the token; the token itself is never stored. */
        readonly token_digest: string;
      };
    }
  | { readonly type: 'PersonalAccessTokenRevoked'; readonly data: { readonly id: number; readonly user_id: number } }
  /** GitLab (Devise reconfirmable): a new email waits for confirmation; the primary email is unchanged. */
  | { readonly type: 'UserEmailChangeRequested'; readonly data: { readonly id: number; readonly unconfirmed_email: string } }
  /** GitLab's custom attributes (admin-only key/value pairs on a user). */
  | { readonly type: 'UserCustomAttributeSet'; readonly data: { readonly id: number; readonly key: string; readonly value: string } }
  | { readonly type: 'UserCustomAttributeDeleted'; readonly data: { readonly id: number; readonly key: string } };

export type UserEventType = UserEvent['type'];
export const USER_EVENT_TYPES: readonly UserEventType[] = [
  'UserCreated',
  'UserProfileUpdated',
  'UserPasswordChanged',
  'UserBlocked',
  'UserUnblocked',
  'UserDeleted',
  'UserStatusSet',
  'UserStatusCleared',
  'PersonalAccessTokenCreated',
  'PersonalAccessTokenRevoked',
  'UserEmailChangeRequested',
  'UserCustomAttributeSet',
  'UserCustomAttributeDeleted',
];

// ───────────────────────────── State ─────────────────────────────

export interface UserState {
  readonly id: number | null;
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly profile: UserProfile | null;
  readonly state: 'active' | 'blocked';
  readonly status: UserStatus | null;
  readonly tokens: ReadonlyMap<number, TokenRecord>;
  /** Email waiting for confirmation (Devise's unconfirmed_email). */
  readonly unconfirmedEmail: string | null;
  readonly customAttributes: ReadonlyMap<string, string>;
}

export const userStreamId = (id: number) => `user-${id}`;

// ───────────────────────────── Commands ─────────────────────────────

export type UserCommand =
  | { readonly type: 'CreateUser'; readonly id: number; readonly namespaceId: number; readonly profile: UserProfile; readonly passwordHash: string | null; readonly confirmed: boolean; readonly passwordResetRequired: boolean }
  | {
      readonly type: 'UpdateUser';
      readonly changes: ProfileChanges;
      readonly passwordHash: string | null;
      /** GitLab's skip_reconfirmation: a changed email applies at once instead of waiting for confirmation. */
      readonly skipReconfirmation?: boolean;
    }
  | { readonly type: 'BlockUser' }
  | { readonly type: 'UnblockUser' }
  | { readonly type: 'DeleteUser'; readonly hardDelete: boolean; readonly soleOwnerOfGroups: number }
  | { readonly type: 'SetUserStatus'; readonly emoji: string | null; readonly message: string | null; readonly messageHtml: string }
  | {
      readonly type: 'CreatePersonalAccessToken';
      readonly tokenId: number;
      readonly name: string;
      /** As requested; validated against TOKEN_SCOPES here. */
      readonly scopes: readonly string[];
      readonly expiresAt: string | null;
      readonly impersonation: boolean;
      readonly tokenDigest: string;
    }
  | { readonly type: 'RevokePersonalAccessToken'; readonly tokenId: number; readonly impersonation: boolean }
  | { readonly type: 'SetUserCustomAttribute'; readonly key: string; readonly value: string }
  | { readonly type: 'DeleteUserCustomAttribute'; readonly key: string };

// ───────────────────────────── Validation ─────────────────────────────

// GitLab: Gitlab::PathRegex.namespace_format_regex and its message.
const USERNAME_FORMAT = /^[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_\-]$|^[a-zA-Z0-9_]$/;
const USERNAME_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";
const EMAIL_FORMAT = /^[^@\s]+@[^@\s]+$/;
/** GitLab: UserStatus::DEFAULT_EMOJI, used when a message is set without an emoji. */
export const DEFAULT_STATUS_EMOJI = 'speech_balloon';
// GitLab validates the emoji against its emoji list; names are lower-case words, digits, '_', '+', '-'.
const EMOJI_NAME = /^[a-z0-9_+-]+$/;

/** Rails' blank?: nil, empty or only whitespace. */
export const isBlank = (value: string | null | undefined) => value === null || value === undefined || value.trim() === '';

/** GitLab (Devise case_insensitive_keys / strip_whitespace_keys): emails are stripped and downcased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** A string column of GitLab's (Rails' `string`, 255 characters): longer does not fit a btree index entry either. */
export const STRING_MAXIMUM = 255;
const tooLong = (maximum: number) => `is too long (maximum is ${maximum} characters)`;

/**
 * GitLab: CustomAttribute validates the presence of key and value. Both are indexed
 * (`key, value`), so both are limited to a string column's 255 characters.
 */
export function validateCustomAttribute(key: string, value: string): void {
  const errors: Record<string, string[]> = {};
  if (isBlank(key)) errors.key = ["can't be blank"];
  else if (key.length > STRING_MAXIMUM) errors.key = [tooLong(STRING_MAXIMUM)];
  if (isBlank(value)) errors.value = ["can't be blank"];
  else if (value.length > STRING_MAXIMUM) errors.value = [tooLong(STRING_MAXIMUM)];
  if (Object.keys(errors).length > 0) throw invalid(errors);
}

export function validateProfile(profile: Partial<UserProfile>, password?: string | undefined): void {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (profile.username !== undefined) {
    if (profile.username.length === 0) add('username', "can't be blank");
    else if (profile.username.length > 255) add('username', 'is too long (maximum is 255 characters)');
    else if (!USERNAME_FORMAT.test(profile.username) || /\.(git|atom)$/i.test(profile.username)) add('username', USERNAME_MESSAGE);
  }
  if (profile.name !== undefined) {
    if (profile.name.trim().length === 0) add('name', "can't be blank");
    else if (profile.name.length > 128) add('name', 'is too long (maximum is 128 characters)');
  }
  if (profile.email !== undefined) {
    if (profile.email.length === 0) add('email', "can't be blank");
    else if (profile.email.length > STRING_MAXIMUM) add('email', tooLong(STRING_MAXIMUM));
    else if (!EMAIL_FORMAT.test(profile.email)) add('email', 'is invalid');
  }
  if (profile.projects_limit !== undefined && profile.projects_limit < 0) add('projects_limit', 'must be greater than or equal to 0');
  if (profile.bio !== undefined && profile.bio.length > 255) add('bio', 'is too long (maximum is 255 characters)');
  if (password !== undefined) {
    // Devise validatable: presence, then length 8..128 (allow_blank).
    const length = [...password].length;
    if (password === '') add('password', "can't be blank");
    else if (length < 8) add('password', 'is too short (minimum is 8 characters)');
    else if (length > 128) add('password', 'is too long (maximum is 128 characters)');
  }
  if (Object.keys(errors).length > 0) throw invalid(errors);
}

// GitLab: owns_public_email — the public email must be one of the user's emails (here: the primary one).
function checkPublicEmail(publicEmail: string, email: string) {
  if (publicEmail !== '' && publicEmail.toLowerCase() !== email.toLowerCase()) throw invalid({ public_email: ['is not an email you own'] });
}

function validateToken(name: string, scopes: readonly string[]) {
  const errors: Record<string, string[]> = {};
  if (isBlank(name)) errors.name = ["can't be blank"];
  // GitLab: PersonalAccessToken validates scopes' presence, then that each is an available scope.
  if (scopes.length === 0) errors.scopes = ["can't be blank"];
  else if (!scopes.every((scope) => (TOKEN_SCOPES as readonly string[]).includes(scope))) errors.scopes = ['can only contain available scopes'];
  if (Object.keys(errors).length > 0) throw invalid(errors);
}

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (): UserState => ({
  id: null,
  exists: false,
  deleted: false,
  profile: null,
  state: 'active',
  status: null,
  tokens: new Map(),
  unconfirmedEmail: null,
  customAttributes: new Map(),
});

function evolve(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserCreated': {
      const { id, namespace_id: _ns, password_hash: _, confirmed: __, password_reset_required: ___, ...profile } = event.data;
      return { ...state, id, exists: true, profile };
    }
    case 'UserProfileUpdated':
      return { ...state, profile: { ...state.profile!, ...event.data.changes } };
    case 'UserBlocked':
      return { ...state, state: 'blocked' };
    case 'UserUnblocked':
      return { ...state, state: 'active' };
    case 'UserDeleted':
      return { ...state, exists: false, deleted: true };
    case 'UserStatusSet': {
      const { emoji, message, message_html } = event.data;
      return { ...state, status: { emoji, message, message_html } };
    }
    case 'UserStatusCleared':
      return { ...state, status: null };
    case 'PersonalAccessTokenCreated': {
      const tokens = new Map(state.tokens);
      const { id, name, scopes, expires_at, impersonation } = event.data;
      tokens.set(id, { id, name, scopes, expires_at, impersonation, revoked: false });
      return { ...state, tokens };
    }
    case 'PersonalAccessTokenRevoked': {
      const token = state.tokens.get(event.data.id);
      if (!token) return state;
      const tokens = new Map(state.tokens);
      tokens.set(token.id, { ...token, revoked: true });
      return { ...state, tokens };
    }
    case 'UserEmailChangeRequested':
      return { ...state, unconfirmedEmail: event.data.unconfirmed_email };
    case 'UserCustomAttributeSet': {
      const customAttributes = new Map(state.customAttributes);
      customAttributes.set(event.data.key, event.data.value);
      return { ...state, customAttributes };
    }
    case 'UserCustomAttributeDeleted': {
      const customAttributes = new Map(state.customAttributes);
      customAttributes.delete(event.data.key);
      return { ...state, customAttributes };
    }
    default:
      return state;
  }
}

function decide(command: UserCommand, state: UserState): UserEvent[] {
  if (command.type === 'CreateUser') {
    if (state.exists || state.deleted) throw conflict('User already exists');
    checkPublicEmail(command.profile.public_email, command.profile.email);
    return [
      {
        type: 'UserCreated',
        data: {
          id: command.id,
          namespace_id: command.namespaceId,
          ...command.profile,
          password_hash: command.passwordHash,
          confirmed: command.confirmed,
          password_reset_required: command.passwordResetRequired,
        },
      },
    ];
  }
  if (!state.exists || state.id === null || !state.profile) throw notFound('User');
  const id = state.id;
  switch (command.type) {
    case 'UpdateUser': {
      const requested: Record<string, unknown> = { ...command.changes };
      // GitLab (Devise reconfirmable): without skip_reconfirmation a new email only becomes
      // unconfirmed_email; the primary email stays until the user confirms.
      let emailRequest: string | undefined;
      if (typeof requested.email === 'string' && requested.email !== state.profile.email && !command.skipReconfirmation) {
        emailRequest = requested.email;
        delete requested.email;
      }
      const changes = changedFields(state.profile, requested as ProfileChanges);
      const merged = { ...state.profile, ...changes };
      if (changes.public_email !== undefined) checkPublicEmail(merged.public_email, merged.email);
      const events: UserEvent[] = [];
      if (Object.keys(changes).length > 0) events.push({ type: 'UserProfileUpdated', data: { id, changes } });
      if (emailRequest !== undefined && emailRequest !== state.unconfirmedEmail) {
        events.push({ type: 'UserEmailChangeRequested', data: { id, unconfirmed_email: emailRequest } });
      }
      // GitLab: a password set by an admin must be changed again at next login.
      if (command.passwordHash) events.push({ type: 'UserPasswordChanged', data: { id, password_hash: command.passwordHash, expires_now: true } });
      return events;
    }
    // GitLab: block/unblock of a user already in that state is no transition (the API answers false).
    case 'BlockUser':
      return state.state === 'blocked' ? [] : [{ type: 'UserBlocked', data: { id } }];
    case 'UnblockUser':
      return state.state === 'active' ? [] : [{ type: 'UserUnblocked', data: { id } }];
    case 'DeleteUser':
      // GitLab: a sole group owner can only be hard-deleted.
      if (command.soleOwnerOfGroups > 0 && !command.hardDelete) {
        throw conflict('User cannot be removed while is the sole-owner of a group');
      }
      return [{ type: 'UserDeleted', data: { id, hard_delete: command.hardDelete } }];
    case 'SetUserStatus': {
      // GitLab (Users::SetStatusService): blank emoji and message clear the status;
      // a message without an emoji gets speech_balloon.
      if (isBlank(command.emoji) && isBlank(command.message)) return state.status ? [{ type: 'UserStatusCleared', data: { id } }] : [];
      const emoji = isBlank(command.emoji) ? DEFAULT_STATUS_EMOJI : command.emoji!;
      const errors: Record<string, string[]> = {};
      if (!EMOJI_NAME.test(emoji)) errors.emoji = ['is not included in the list'];
      if (command.message !== null && command.message.length > 100) errors.message = ['is too long (maximum is 100 characters)'];
      if (Object.keys(errors).length > 0) throw invalid(errors);
      const status = { emoji, message: command.message, message_html: command.messageHtml };
      if (state.status && JSON.stringify(state.status) === JSON.stringify(status)) return [];
      return [{ type: 'UserStatusSet', data: { id, ...status } }];
    }
    case 'CreatePersonalAccessToken':
      validateToken(command.name, command.scopes);
      return [
        {
          type: 'PersonalAccessTokenCreated',
          data: {
            id: command.tokenId,
            user_id: id,
            name: command.name,
            scopes: command.scopes as readonly TokenScope[],
            expires_at: command.expiresAt,
            impersonation: command.impersonation,
            token_digest: command.tokenDigest,
          },
        },
      ];
    case 'RevokePersonalAccessToken': {
      const token = state.tokens.get(command.tokenId);
      if (!token || token.impersonation !== command.impersonation) {
        throw notFound(command.impersonation ? 'Impersonation Token' : 'Personal Access Token');
      }
      if (token.revoked) {
        // GitLab: revoking an impersonation token again is a no-op (204); a personal one is refused.
        if (command.impersonation) return [];
        throw badRequest('Token already revoked');
      }
      return [{ type: 'PersonalAccessTokenRevoked', data: { id: token.id, user_id: id } }];
    }
    case 'SetUserCustomAttribute': {
      validateCustomAttribute(command.key, command.value);
      if (state.customAttributes.get(command.key) === command.value) return [];
      return [{ type: 'UserCustomAttributeSet', data: { id, key: command.key, value: command.value } }];
    }
    case 'DeleteUserCustomAttribute':
      // GitLab: find_by! raises RecordNotFound, answered as "404 Not found".
      if (!state.customAttributes.has(command.key)) throw recordNotFound('Custom Attribute');
      return [{ type: 'UserCustomAttributeDeleted', data: { id, key: command.key } }];
    default:
      return unhandled(command);
  }
}

function changedFields(profile: UserProfile, changes: ProfileChanges): ProfileChanges {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const current = profile[key as keyof UserProfile];
    if (JSON.stringify(current) !== JSON.stringify(value)) changed[key] = value;
  }
  return changed as ProfileChanges;
}

export const userDecider: Decider<UserCommand, UserEvent, UserState> = { initialState, evolve, decide };

// ───────────────────────────── Claims ─────────────────────────────

// GitLab: the email conflict is reported before the username conflict.
const emailClaim = (email: string) => ({ kind: 'user_email', key: email.toLowerCase(), conflictMessage: 'Email has already been taken' });
// Usernames share the namespace path space with top-level groups (issue 3).
const usernameClaim = (username: string) => ({ kind: 'namespace_path', key: username.toLowerCase(), conflictMessage: 'Username has already been taken' });

export function userClaims(event: UserEvent, before: UserState): ClaimChanges {
  switch (event.type) {
    case 'UserCreated':
      return { acquire: [emailClaim(event.data.email), usernameClaim(event.data.username)], release: [] };
    case 'UserProfileUpdated': {
      const acquire = [];
      const release = [];
      const { email, username } = event.data.changes;
      if (email !== undefined && before.profile && email.toLowerCase() !== before.profile.email.toLowerCase()) {
        acquire.push(emailClaim(email));
        release.push(emailClaim(before.profile.email));
      }
      if (username !== undefined && before.profile && username.toLowerCase() !== before.profile.username.toLowerCase()) {
        acquire.push(usernameClaim(username));
        release.push(usernameClaim(before.profile.username));
      }
      return { acquire, release };
    }
    case 'UserDeleted':
      return before.profile ? { acquire: [], release: [emailClaim(before.profile.email), usernameClaim(before.profile.username)] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}

export function userEventIndex(event: UserEvent) {
  return { targetType: 'User', targetId: event.type.startsWith('PersonalAccessToken') ? (event.data as { user_id: number }).user_id : event.data.id };
}
