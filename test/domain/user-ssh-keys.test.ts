import { describe, expect, it } from 'vitest';
import {
  type UserSshKeyCommand,
  type UserSshKeyEvent,
  userSshKeyClaims,
  userSshKeyDecider,
  userSshKeyEventIndex,
  userSshKeyStreamId,
} from '../../src/domain/user-ssh-keys.js';
import { NO_KEY_RESTRICTIONS, parsePublicKey } from '../../src/domain/ssh-keys.js';
import { deciderSpec, rejected } from '../support/decider.js';
import { sshPublicKey } from '../support/ssh-keys.js';

const { on } = deciderSpec(userSshKeyDecider);

const KEY = sshPublicKey('ed25519', 'mia@laptop');
const PARSED = parsePublicKey(KEY)!;

const add = (extra: Partial<Extract<UserSshKeyCommand, { type: 'AddUserSshKey' }>> = {}): UserSshKeyCommand => ({
  type: 'AddUserSshKey',
  userId: 3,
  title: 'Laptop',
  key: KEY,
  restrictions: NO_KEY_RESTRICTIONS,
  fingerprintTaken: false,
  ...extra,
});
const added: UserSshKeyEvent = {
  type: 'UserSshKeyAdded',
  data: { id: 7, user_id: 3, title: 'Laptop', key: KEY, fingerprint: PARSED.fingerprint, fingerprint_sha256: PARSED.fingerprintSha256 },
};
const removed: UserSshKeyEvent = { type: 'UserSshKeyRemoved', data: { id: 7, user_id: 3 } };
const remove = (userId = 3): UserSshKeyCommand => ({ type: 'RemoveUserSshKey', userId });

describe('user SSH keys decider', () => {
  it('names one stream per key', () => expect(userSshKeyStreamId(7)).toBe('ssh-key-7'));

  describe('AddUserSshKey', () => {
    it('adds the key, sanitized', () => {
      on(7).given().when(add()).then([added]);
      const [type, blob] = KEY.split(' ') as [string, string];
      on(7)
        .given()
        .when(add({ key: `${type} ${blob.slice(0, 12)}\n${blob.slice(12)} mia@laptop and more` }))
        .then([added]);
    });

    it("answers the Key model's field errors, not nested", () => {
      on(7)
        .given()
        .when(add({ key: 'foo', title: '' }))
        .then(
          rejected('invalid', {
            fields: { title: ["can't be blank"], key: ['is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'], fingerprint: ['cannot be generated'] },
          }),
        );
    });

    it('refuses a fingerprint another key holds, and applies the restrictions', () => {
      on(7).given().when(add({ fingerprintTaken: true })).then(rejected('invalid', { fields: { fingerprint: ['has already been taken'] } }));
      on(7)
        .given()
        .when(add({ restrictions: { ...NO_KEY_RESTRICTIONS, ed25519_key_restriction: -1 } }))
        .then(rejected('invalid', { fields: { key: ['type is forbidden. Must be RSA, DSA, or ECDSA'] } }));
    });
  });

  describe('RemoveUserSshKey', () => {
    it("removes the owner's key", () => on(7).given(added).when(remove()).then([removed]));
    it('answers 404 Key for another user, a removed key, or none', () => {
      on(7).given(added).when(remove(4)).then(rejected('not_found', { subject: 'Key' }));
      on(7).given(added, removed).when(remove()).then(rejected('not_found', { subject: 'Key' }));
      on(7).given().when(remove()).then(rejected('not_found', { subject: 'Key' }));
    });
  });

  it("claims the fingerprint deploy keys claim, and gives it back on removal", () => {
    const claim = { kind: 'key_fingerprint', key: PARSED.fingerprint };
    expect(userSshKeyClaims(added, userSshKeyDecider.initialState(7)).acquire).toMatchObject([claim]);
    expect(userSshKeyClaims(removed, on(7).given(added).state).release).toMatchObject([claim]);
  });

  it('indexes the events by key', () => expect(userSshKeyEventIndex(added)).toEqual({ targetType: 'Key', targetId: 7 }));
});
