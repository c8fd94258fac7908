import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE } from '../../src/commands/users.js';
import { DomainError } from '../../src/domain/errors.js';
import type { ProfileChanges, UserEvent, UserProfile } from '../../src/domain/users.js';
import { userClaims, userDecider, type UserCommand } from '../../src/domain/users/decider.js';
import { validateProfile } from '../../src/domain/users/profile.js';
import { deciderSpec, rejected } from '../support/decider.js';

// ───────────────────────────── given / when / then ─────────────────────────────

/** User 7's stream. */
const given = (...history: UserEvent[]) => deciderSpec(userDecider).on(7).given(...history);

const profile = (overrides: Partial<UserProfile> = {}): UserProfile => ({
  ...DEFAULT_PROFILE,
  name: 'Jane Doe',
  username: 'jane',
  email: 'jane@example.com',
  ...overrides,
});

const created = (overrides: Partial<UserProfile> = {}): UserEvent => ({
  type: 'UserCreated',
  data: { id: 7, namespace_id: 70, ...profile(overrides), password_hash: 'scrypt$x', confirmed: true, password_reset_required: false },
});

const update = (fields: { changes?: ProfileChanges; passwordHash?: string | null; skipReconfirmation?: boolean }): UserCommand => ({
  type: 'UpdateUser',
  changes: {},
  passwordHash: null,
  ...fields,
});

// ───────────────────────────── Specifications ─────────────────────────────

describe('CreateUser', () => {
  it('creates the user with its personal namespace and the password hash only', () => {
    given()
      .when({ type: 'CreateUser', namespaceId: 70, profile: profile(), passwordHash: 'scrypt$x', confirmed: true, passwordResetRequired: false })
      .then([created()]);
  });
  it('refuses an id that was already used, even by a deleted user', () => {
    const command: UserCommand = { type: 'CreateUser', namespaceId: 70, profile: profile(), passwordHash: null, confirmed: false, passwordResetRequired: true };
    given(created()).when(command).then(rejected('conflict'));
    given(created(), { type: 'UserDeleted', data: { id: 7, hard_delete: false } }).when(command).then(rejected('conflict'));
  });
  it('refuses a public email that is not the user’s own (GitLab: owns_public_email)', () => {
    given()
      .when({ type: 'CreateUser', namespaceId: 70, profile: profile({ public_email: 'other@example.com' }), passwordHash: null, confirmed: false, passwordResetRequired: true })
      .then(rejected('invalid', { fields: { public_email: ['is not an email you own'] } }));
  });
});

describe('UpdateUser', () => {
  it('records only the fields that change', () => {
    given(created())
      .when(update({ changes: { name: 'Jane Doe', bio: 'hello', projects_limit: 100000 } }))
      .then([{ type: 'UserProfileUpdated', data: { id: 7, changes: { bio: 'hello' }, previous_email: null } }]);
  });
  it('appends nothing when nothing changes', () => {
    given(created()).when(update({ changes: { name: 'Jane Doe', email: 'jane@example.com' } })).then([]);
  });
  it('keeps the primary email and records the new one as unconfirmed (Devise reconfirmable)', () => {
    given(created())
      .when(update({ changes: { email: 'new@example.com' } }))
      .then([{ type: 'UserEmailChangeRequested', data: { id: 7, unconfirmed_email: 'new@example.com' } }]);
  });
  it('does not request the same unconfirmed email twice', () => {
    given(created(), { type: 'UserEmailChangeRequested', data: { id: 7, unconfirmed_email: 'new@example.com' } })
      .when(update({ changes: { email: 'new@example.com' } }))
      .then([]);
  });
  it('changes the email at once with skip_reconfirmation', () => {
    given(created())
      .when(update({ changes: { email: 'new@example.com' }, skipReconfirmation: true }))
      .then([{ type: 'UserProfileUpdated', data: { id: 7, changes: { email: 'new@example.com' }, previous_email: 'jane@example.com' } }]);
  });
  it('expires a password an administrator sets', () => {
    given(created())
      .when(update({ passwordHash: 'scrypt$y' }))
      .then([{ type: 'UserPasswordChanged', data: { id: 7, password_hash: 'scrypt$y', expires_now: true } }]);
  });
  it('accepts the primary email as public email and refuses another one', () => {
    given(created())
      .when(update({ changes: { public_email: 'jane@example.com' } }))
      .then([{ type: 'UserProfileUpdated', data: { id: 7, changes: { public_email: 'jane@example.com' }, previous_email: null } }]);
    given(created()).when(update({ changes: { public_email: 'x@example.com' } })).then(rejected('invalid', { fields: { public_email: ['is not an email you own'] } }));
  });
  it('is not found for a user that does not exist or was deleted', () => {
    given().when(update({ changes: { bio: 'x' } })).then(rejected('not_found', { subject: 'User' }));
    given(created(), { type: 'UserDeleted', data: { id: 7, hard_delete: true } }).when(update({ changes: { bio: 'x' } })).then(rejected('not_found'));
  });
});

describe('BlockUser / UnblockUser', () => {
  it('blocks an active user once', () => {
    given(created()).when({ type: 'BlockUser' }).then([{ type: 'UserBlocked', data: { id: 7 } }]);
    given(created(), { type: 'UserBlocked', data: { id: 7 } }).when({ type: 'BlockUser' }).then([]);
  });
  it('unblocks a blocked user once', () => {
    given(created(), { type: 'UserBlocked', data: { id: 7 } }).when({ type: 'UnblockUser' }).then([{ type: 'UserUnblocked', data: { id: 7 } }]);
    given(created()).when({ type: 'UnblockUser' }).then([]);
  });
});

describe('DeleteUser', () => {
  it('deletes, soft or hard', () => {
    given(created()).when({ type: 'DeleteUser', hardDelete: false, soleOwnerOfGroups: 0 }).then([{ type: 'UserDeleted', data: { id: 7, hard_delete: false } }]);
    given(created()).when({ type: 'DeleteUser', hardDelete: true, soleOwnerOfGroups: 2 }).then([{ type: 'UserDeleted', data: { id: 7, hard_delete: true } }]);
  });
  it('refuses to soft-delete the sole owner of a group', () => {
    given(created())
      .when({ type: 'DeleteUser', hardDelete: false, soleOwnerOfGroups: 1 })
      .then(rejected('conflict', { text: 'User cannot be removed while is the sole-owner of a group' }));
  });
});

describe('SetUserStatus', () => {
  it('defaults the emoji to speech_balloon when only a message is given', () => {
    given(created())
      .when({ type: 'SetUserStatus', emoji: null, message: 'lunch', messageHtml: 'lunch' })
      .then([{ type: 'UserStatusSet', data: { id: 7, emoji: 'speech_balloon', message: 'lunch', message_html: 'lunch' } }]);
  });
  it('keeps a missing message as null', () => {
    given(created())
      .when({ type: 'SetUserStatus', emoji: 'coffee', message: null, messageHtml: '' })
      .then([{ type: 'UserStatusSet', data: { id: 7, emoji: 'coffee', message: null, message_html: '' } }]);
  });
  it('clears the status when emoji and message are blank, and only if there is one', () => {
    const withStatus = given(created(), { type: 'UserStatusSet', data: { id: 7, emoji: 'coffee', message: 'x', message_html: 'x' } });
    withStatus.when({ type: 'SetUserStatus', emoji: ' ', message: '', messageHtml: '' }).then([{ type: 'UserStatusCleared', data: { id: 7 } }]);
    given(created()).when({ type: 'SetUserStatus', emoji: null, message: null, messageHtml: '' }).then([]);
  });
  it('appends nothing when the status is the same', () => {
    given(created(), { type: 'UserStatusSet', data: { id: 7, emoji: 'coffee', message: 'x', message_html: 'x' } })
      .when({ type: 'SetUserStatus', emoji: 'coffee', message: 'x', messageHtml: 'x' })
      .then([]);
  });
  it('refuses a message over 100 characters and an unknown emoji', () => {
    given(created())
      .when({ type: 'SetUserStatus', emoji: 'Not An Emoji', message: 'x'.repeat(101), messageHtml: '' })
      .then(rejected('invalid', { fields: { emoji: ['is not included in the list'], message: ['is too long (maximum is 100 characters)'] } }));
  });
});

describe('CreatePersonalAccessToken / RevokePersonalAccessToken', () => {
  const token = (scopes: string[], name = 'ci'): UserCommand => ({
    type: 'CreatePersonalAccessToken',
    tokenId: 3,
    name,
    scopes,
    expiresAt: null,
    impersonation: true,
    tokenDigest: 'digest',
  });
  const tokenCreated: UserEvent = {
    type: 'PersonalAccessTokenCreated',
    data: { id: 3, user_id: 7, name: 'ci', scopes: ['api'], expires_at: null, impersonation: true, token_digest: 'digest' },
  };
  it('creates a token with its digest', () => {
    given(created()).when(token(['api'])).then([tokenCreated]);
  });
  it('validates name and scopes as GitLab’s PersonalAccessToken does', () => {
    given(created()).when(token([], ' ')).then(rejected('invalid', { fields: { name: ["can't be blank"], scopes: ["can't be blank"] } }));
    given(created()).when(token(['api', 'admin'])).then(rejected('invalid', { fields: { scopes: ['can only contain available scopes'] } }));
  });
  it('revokes an impersonation token once; revoking it again changes nothing', () => {
    given(created(), tokenCreated).when({ type: 'RevokePersonalAccessToken', tokenId: 3, impersonation: true }).then([{ type: 'PersonalAccessTokenRevoked', data: { id: 3, user_id: 7 } }]);
    given(created(), tokenCreated, { type: 'PersonalAccessTokenRevoked', data: { id: 3, user_id: 7 } })
      .when({ type: 'RevokePersonalAccessToken', tokenId: 3, impersonation: true })
      .then([]);
  });
  it('does not find a token of the other kind or of nobody', () => {
    given(created(), tokenCreated)
      .when({ type: 'RevokePersonalAccessToken', tokenId: 3, impersonation: false })
      .then(rejected('not_found', { subject: 'Personal Access Token' }));
    given(created()).when({ type: 'RevokePersonalAccessToken', tokenId: 9, impersonation: true }).then(rejected('not_found', { subject: 'Impersonation Token' }));
  });
});

describe('SetUserCustomAttribute / DeleteUserCustomAttribute', () => {
  const set: UserEvent = { type: 'UserCustomAttributeSet', data: { id: 7, key: 'team', value: 'blue' } };
  it('sets a value, and changes it', () => {
    given(created()).when({ type: 'SetUserCustomAttribute', key: 'team', value: 'blue' }).then([set]);
    given(created(), set)
      .when({ type: 'SetUserCustomAttribute', key: 'team', value: 'red' })
      .then([{ type: 'UserCustomAttributeSet', data: { id: 7, key: 'team', value: 'red' } }]);
  });
  it('appends nothing for the same value', () => {
    given(created(), set).when({ type: 'SetUserCustomAttribute', key: 'team', value: 'blue' }).then([]);
  });
  it('needs a key and a value', () => {
    given(created())
      .when({ type: 'SetUserCustomAttribute', key: ' ', value: '' })
      .then(rejected('invalid', { fields: { key: ["can't be blank"], value: ["can't be blank"] } }));
  });
  it('deletes an existing key; an unknown key is "404 Not found"', () => {
    given(created(), set).when({ type: 'DeleteUserCustomAttribute', key: 'team' }).then([{ type: 'UserCustomAttributeDeleted', data: { id: 7, key: 'team' } }]);
    given(created(), set, { type: 'UserCustomAttributeDeleted', data: { id: 7, key: 'team' } })
      .when({ type: 'DeleteUserCustomAttribute', key: 'team' })
      .then(rejected('not_found', { record: true }));
  });
  it('is not found on a deleted user', () => {
    given(created(), { type: 'UserDeleted', data: { id: 7, hard_delete: false } })
      .when({ type: 'SetUserCustomAttribute', key: 'team', value: 'blue' })
      .then(rejected('not_found', { subject: 'User' }));
  });
});

describe('validateProfile', () => {
  const fails = (profileFields: Partial<UserProfile>, password: string | undefined, fields: Record<string, string[]>) => {
    expect(() => validateProfile(profileFields, password)).toThrow(DomainError);
    try {
      validateProfile(profileFields, password);
    } catch (error) {
      expect((error as DomainError).fields).toEqual(fields);
    }
  };
  it('takes passwords of 8 to 128 characters (Devise)', () => {
    expect(() => validateProfile({}, 'x'.repeat(8))).not.toThrow();
    expect(() => validateProfile({}, 'x'.repeat(128))).not.toThrow();
    fails({}, 'x'.repeat(7), { password: ['is too short (minimum is 8 characters)'] });
    fails({}, 'x'.repeat(129), { password: ['is too long (maximum is 128 characters)'] });
    fails({}, '', { password: ["can't be blank"] });
  });
  it('checks username, name and email', () => {
    fails({ username: '-bad', name: ' ', email: 'nope' }, undefined, {
      username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."],
      name: ["can't be blank"],
      email: ['is invalid'],
    });
    fails({ username: 'repo.git' }, undefined, { username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."] });
  });
});

describe('claims', () => {
  it('takes email then username (GitLab reports the email conflict first) and gives them back on delete', () => {
    const before = given().state;
    const createdEvent = created({ username: 'Jane', email: 'jane@example.com' });
    expect(userClaims(createdEvent, before).acquire.map((c) => [c.kind, c.key, c.conflictMessage])).toEqual([
      ['user_email', 'jane@example.com', 'Email has already been taken'],
      ['namespace_path', 'jane', 'Username has already been taken'],
    ]);
    const after = given(createdEvent).state;
    expect(userClaims({ type: 'UserDeleted', data: { id: 7, hard_delete: false } }, after).release.map((c) => c.key)).toEqual(['jane@example.com', 'jane']);
  });
  it('claims nothing for an email waiting for confirmation', () => {
    expect(userClaims({ type: 'UserEmailChangeRequested', data: { id: 7, unconfirmed_email: 'x@example.com' } }, given(created()).state)).toEqual({ acquire: [], release: [] });
  });
});
