import type { ClaimChanges, Decider } from './decider.js';
import { NO_CLAIMS } from './decider.js';
import { DomainError, badRequest, invalid, notFound } from './errors.js';

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

export const TOKEN_SCOPES = ['api', 'read_user', 'read_api', 'read_repository', 'write_repository', 'sudo'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface UserStatus {
  readonly emoji: string;
  readonly message: string;
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
  | { readonly type: 'PersonalAccessTokenRevoked'; readonly data: { readonly id: number; readonly user_id: number } };

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
}

export const userStreamId = (id: number) => `user-${id}`;

// ───────────────────────────── Commands ─────────────────────────────

export type UserCommand =
  | { readonly type: 'CreateUser'; readonly id: number; readonly namespaceId: number; readonly profile: UserProfile; readonly passwordHash: string | null; readonly confirmed: boolean; readonly passwordResetRequired: boolean }
  | { readonly type: 'UpdateUser'; readonly changes: ProfileChanges; readonly passwordHash: string | null }
  | { readonly type: 'BlockUser' }
  | { readonly type: 'UnblockUser' }
  | { readonly type: 'DeleteUser'; readonly hardDelete: boolean; readonly soleOwnerOfGroups: number }
  | { readonly type: 'SetUserStatus'; readonly emoji: string; readonly message: string; readonly messageHtml: string }
  | {
      readonly type: 'CreatePersonalAccessToken';
      readonly tokenId: number;
      readonly name: string;
      readonly scopes: readonly TokenScope[];
      readonly expiresAt: string | null;
      readonly impersonation: boolean;
      readonly tokenDigest: string;
    }
  | { readonly type: 'RevokePersonalAccessToken'; readonly tokenId: number; readonly impersonation: boolean };

// ───────────────────────────── Validation ─────────────────────────────

// GitLab: Gitlab::PathRegex.namespace_format_regex and its message.
const USERNAME_FORMAT = /^[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_\-]$|^[a-zA-Z0-9_]$/;
const USERNAME_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";
const EMAIL_FORMAT = /^[^@\s]+@[^@\s]+$/;

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
    else if (!EMAIL_FORMAT.test(profile.email)) add('email', 'is invalid');
  }
  if (profile.public_email !== undefined && profile.public_email !== '' && !EMAIL_FORMAT.test(profile.public_email)) add('public_email', 'is invalid');
  if (profile.projects_limit !== undefined && profile.projects_limit < 0) add('projects_limit', 'must be greater than or equal to 0');
  if (profile.bio !== undefined && profile.bio.length > 255) add('bio', 'is too long (maximum is 255 characters)');
  if (password !== undefined) {
    if (password.length < 8) add('password', 'is too short (minimum is 8 characters)');
    else if (password.length > 128) add('password', 'is too long (maximum is 128 characters)');
  }
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
    default:
      return state;
  }
}

function decide(command: UserCommand, state: UserState): UserEvent[] {
  if (command.type === 'CreateUser') {
    if (state.exists || state.deleted) throw new DomainError('conflict', 'User already exists');
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
      const changes = changedFields(state.profile, command.changes);
      const events: UserEvent[] = [];
      if (Object.keys(changes).length > 0) events.push({ type: 'UserProfileUpdated', data: { id, changes } });
      // GitLab: a password set by an admin must be changed again at next login.
      if (command.passwordHash) events.push({ type: 'UserPasswordChanged', data: { id, password_hash: command.passwordHash, expires_now: true } });
      return events;
    }
    case 'BlockUser':
      return state.state === 'blocked' ? [] : [{ type: 'UserBlocked', data: { id } }];
    case 'UnblockUser':
      return state.state === 'active' ? [] : [{ type: 'UserUnblocked', data: { id } }];
    case 'DeleteUser':
      // GitLab: a sole group owner can only be hard-deleted.
      if (command.soleOwnerOfGroups > 0 && !command.hardDelete) {
        throw new DomainError('conflict', 'User cannot be removed while is the sole-owner of a group');
      }
      return [{ type: 'UserDeleted', data: { id, hard_delete: command.hardDelete } }];
    case 'SetUserStatus':
      if (command.emoji === '' && command.message === '') return state.status ? [{ type: 'UserStatusCleared', data: { id } }] : [];
      return [{ type: 'UserStatusSet', data: { id, emoji: command.emoji, message: command.message, message_html: command.messageHtml } }];
    case 'CreatePersonalAccessToken':
      if (command.name.trim() === '') throw invalid({ name: ["can't be blank"] });
      if (command.scopes.length === 0) throw invalid({ scopes: ["can't be blank"] });
      return [
        {
          type: 'PersonalAccessTokenCreated',
          data: {
            id: command.tokenId,
            user_id: id,
            name: command.name,
            scopes: command.scopes,
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
      if (token.revoked) throw badRequest('400 Bad request - Token already revoked');
      return [{ type: 'PersonalAccessTokenRevoked', data: { id: token.id, user_id: id } }];
    }
    default: {
      const unhandled: never = command;
      throw new Error(`unhandled command ${JSON.stringify(unhandled)}`);
    }
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
