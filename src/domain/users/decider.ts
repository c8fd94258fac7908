import { type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from '../decider.js';
import { badRequest, conflict, notFound, recordNotFound } from '../errors.js';
import { type ProfileChanges, type UserEvent, type UserProfile, validateCustomAttribute } from '../users.js';
import { changedFields, checkPublicEmail } from './profile.js';
import { requestedStatus, type UserStatus } from './status.js';
import { type TokenRecord, validateToken } from './tokens.js';
import { sameUpload, type UploadRef } from '../uploads.js';

// ───────────────────────────── State ─────────────────────────────

export interface UserState {
  /** The stream's key. */
  readonly id: number;
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly profile: UserProfile | null;
  readonly state: 'active' | 'blocked';
  readonly status: UserStatus | null;
  readonly tokens: ReadonlyMap<number, TokenRecord>;
  /** Email waiting for confirmation (Devise's unconfirmed_email). */
  readonly unconfirmedEmail: string | null;
  readonly customAttributes: ReadonlyMap<string, string>;
  /** The uploaded avatar; null while the user shows a Gravatar. */
  readonly avatar: UploadRef | null;
}

// ───────────────────────────── Commands ─────────────────────────────

export type UserCommand =
  | {
      readonly type: 'CreateUser';
      readonly namespaceId: number;
      readonly profile: UserProfile;
      readonly passwordHash: string | null;
      readonly confirmed: boolean;
      readonly passwordResetRequired: boolean;
      readonly avatar?: UploadRef | undefined;
    }
  | {
      readonly type: 'UpdateUser';
      readonly changes: ProfileChanges;
      readonly passwordHash: string | null;
      /** A new avatar (its bytes stored beside the events, in the same transaction). */
      readonly avatar?: UploadRef | undefined;
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

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): UserState => ({
  id,
  exists: false,
  deleted: false,
  profile: null,
  state: 'active',
  status: null,
  tokens: new Map(),
  unconfirmedEmail: null,
  customAttributes: new Map(),
  avatar: null,
});

function evolve(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserCreated': {
      const { id: _id, namespace_id: _ns, password_hash: _, confirmed: __, password_reset_required: ___, ...profile } = event.data;
      return { ...state, exists: true, profile };
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
    case 'UserAvatarChanged':
      return { ...state, avatar: event.data.avatar };
    default:
      return state;
  }
}

function decide(command: UserCommand, state: UserState): UserEvent[] {
  const { id } = state;
  if (command.type === 'CreateUser') {
    if (state.exists || state.deleted) throw conflict('User already exists');
    checkPublicEmail(command.profile.public_email, command.profile.email);
    return [
      {
        type: 'UserCreated',
        data: {
          id,
          namespace_id: command.namespaceId,
          ...command.profile,
          password_hash: command.passwordHash,
          confirmed: command.confirmed,
          password_reset_required: command.passwordResetRequired,
        },
      },
      ...avatarChange(id, null, command.avatar),
    ];
  }
  if (!state.exists || !state.profile) throw notFound('User');
  switch (command.type) {
    case 'UpdateUser': {
      const requested: ProfileChanges = { ...command.changes };
      // GitLab (Devise reconfirmable): without skip_reconfirmation a new email only becomes
      // unconfirmed_email; the primary email stays until the user confirms.
      let emailRequest: string | undefined;
      if (requested.email !== undefined && requested.email !== state.profile.email && !command.skipReconfirmation) {
        emailRequest = requested.email;
        delete requested.email;
      }
      const changes = changedFields(state.profile, requested);
      const merged = { ...state.profile, ...changes };
      if (changes.public_email !== undefined) checkPublicEmail(merged.public_email, merged.email);
      const events: UserEvent[] = [];
      if (Object.keys(changes).length > 0) {
        const previousEmail = changes.email !== undefined ? state.profile.email : null;
        events.push({ type: 'UserProfileUpdated', data: { id, changes, previous_email: previousEmail } });
      }
      if (emailRequest !== undefined && emailRequest !== state.unconfirmedEmail) {
        events.push({ type: 'UserEmailChangeRequested', data: { id, unconfirmed_email: emailRequest } });
      }
      // GitLab: a password set by an admin must be changed again at next login.
      if (command.passwordHash) events.push({ type: 'UserPasswordChanged', data: { id, password_hash: command.passwordHash, expires_now: true } });
      events.push(...avatarChange(id, state.avatar, command.avatar));
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
      const status = requestedStatus(command);
      if (!status) return state.status ? [{ type: 'UserStatusCleared', data: { id } }] : [];
      if (JSON.stringify(state.status) === JSON.stringify(status)) return [];
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
            scopes: [...command.scopes],
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

/** A new avatar, unless it is the one the user has (same bytes, same name). */
const avatarChange = (id: number, current: UploadRef | null, avatar: UploadRef | undefined): UserEvent[] =>
  avatar && !sameUpload(current, avatar) ? [{ type: 'UserAvatarChanged', data: { id, avatar } }] : [];

/** One user's stream, keyed by the user's id. */
export const userDecider: Decider<UserCommand, UserEvent, UserState, number> = { initialState, evolve, decide };

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
