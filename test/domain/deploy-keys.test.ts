import { describe, expect, it } from 'vitest';
import {
  type DeployKeyCommand,
  type DeployKeyEvent,
  deployKeyClaims,
  deployKeyDecider,
  deployKeyEventIndex,
  deployKeyStreamId,
} from '../../src/domain/deploy-keys.js';
import { NO_KEY_RESTRICTIONS, parsePublicKey } from '../../src/domain/ssh-keys.js';
import { deciderSpec, rejected } from '../support/decider.js';
import { sshPublicKey } from '../support/ssh-keys.js';

const { on } = deciderSpec(deployKeyDecider);

const KEY = sshPublicKey('ed25519', 'ci@example.com');
const PARSED = parsePublicKey(KEY)!;

const create = (extra: Partial<Extract<DeployKeyCommand, { type: 'CreateDeployKey' }>> = {}): DeployKeyCommand => ({
  type: 'CreateDeployKey',
  projectId: 9,
  title: 'CI',
  key: KEY,
  canPush: false,
  userId: 1,
  restrictions: NO_KEY_RESTRICTIONS,
  fingerprintTaken: false,
  ...extra,
});
const created: DeployKeyEvent = {
  type: 'DeployKeyCreated',
  data: { id: 5, title: 'CI', key: KEY, fingerprint: PARSED.fingerprint, fingerprint_sha256: PARSED.fingerprintSha256, user_id: 1 },
};
const linked = (project_id: number, can_push = false): DeployKeyEvent => ({ type: 'DeployKeyLinked', data: { id: 5, project_id, can_push } });
const unlinked = (project_id: number): DeployKeyEvent => ({ type: 'DeployKeyUnlinked', data: { id: 5, project_id } });
const deleted: DeployKeyEvent = { type: 'DeployKeyDeleted', data: { id: 5 } };

describe('deploy keys decider', () => {
  it('names one stream per key', () => expect(deployKeyStreamId(5)).toBe('deploy-key-5'));

  describe('CreateDeployKey', () => {
    it('creates the key and enables it in the project', () => {
      on(5).given().when(create({ canPush: true })).then([created, linked(9, true)]);
    });

    it('stores the sanitized key (a broken base64 joined, the comment cut to one word)', () => {
      const [type, blob] = KEY.split(' ') as [string, string];
      const state = on(5).given().when(create({ key: `${type} ${blob.slice(0, 10)} ${blob.slice(10)} ci@example.com more words` })).state();
      expect(state.fingerprint).toBe(PARSED.fingerprint);
      on(5)
        .given()
        .when(create({ key: `${type} ${blob} a b` }))
        .then([{ ...created, data: { ...created.data, key: `${type} ${blob} a` } } as DeployKeyEvent, linked(9)]);
    });

    it("answers GitLab's nested field errors for an invalid key", () => {
      on(5)
        .given()
        .when(create({ key: 'foo', title: '' }))
        .then(
          rejected('invalid', {
            fields: {
              'deploy_key.title': ["can't be blank"],
              'deploy_key.key': ['is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'],
              'deploy_key.fingerprint': ['cannot be generated'],
            },
          }),
        );
    });

    it('refuses a fingerprint another key holds', () => {
      on(5).given().when(create({ fingerprintTaken: true })).then(rejected('invalid', { fields: { 'deploy_key.fingerprint': ['has already been taken'] } }));
    });

    it('applies the instance key restrictions', () => {
      const rsa = sshPublicKey('rsa1024');
      on(5)
        .given()
        .when(create({ key: rsa, restrictions: { ...NO_KEY_RESTRICTIONS, rsa_key_restriction: 2048 } }))
        .then(rejected('invalid', { fields: { 'deploy_key.key': ['must be at least 2048 bits'] } }));
    });
  });

  describe('LinkDeployKey', () => {
    it('enables the key in another project', () => {
      on(5).given(created, linked(9)).when({ type: 'LinkDeployKey', projectId: 10, canPush: true }).then([linked(10, true)]);
    });
    it('changes nothing when the key is enabled there already', () => {
      on(5).given(created, linked(9)).when({ type: 'LinkDeployKey', projectId: 9, canPush: true }).then([]);
    });
    it('answers 404 Deploy Key for a missing or deleted key', () => {
      on(5).given().when({ type: 'LinkDeployKey', projectId: 9, canPush: false }).then(rejected('not_found', { subject: 'Deploy Key' }));
      on(5).given(created, linked(9), unlinked(9), deleted).when({ type: 'LinkDeployKey', projectId: 9, canPush: false }).then(rejected('not_found', { subject: 'Deploy Key' }));
    });
  });

  describe('UpdateDeployKey', () => {
    const update = (title: string | undefined, canPush: boolean | undefined, projectId = 9): DeployKeyCommand => ({ type: 'UpdateDeployKey', projectId, title, canPush });
    it('changes the title and the project link', () => {
      on(5)
        .given(created, linked(9))
        .when(update('New', true))
        .then([
          { type: 'DeployKeyTitleChanged', data: { id: 5, title: 'New' } },
          { type: 'DeployKeyLinkUpdated', data: { id: 5, project_id: 9, can_push: true } },
        ]);
    });
    it('appends nothing for the same values', () => on(5).given(created, linked(9)).when(update('CI', false)).then([]));
    it('refuses a blank title', () => {
      on(5).given(created, linked(9)).when(update('', undefined)).then(rejected('invalid', { fields: { 'deploy_key.title': ["can't be blank"] } }));
    });
    it('answers 404 Not found for a key not enabled in the project', () => {
      on(5).given(created, linked(9)).when(update('x', undefined, 10)).then(rejected('not_found', { record: true }));
    });
  });

  describe('UnlinkDeployKey', () => {
    const unlink = (projectId: number, liveProjectIds: number[]): DeployKeyCommand => ({ type: 'UnlinkDeployKey', projectId, liveProjectIds });
    it('deletes the key with its last link', () => on(5).given(created, linked(9)).when(unlink(9, [9])).then([unlinked(9), deleted]));
    it('keeps a key enabled elsewhere', () => on(5).given(created, linked(9), linked(10)).when(unlink(9, [9, 10])).then([unlinked(9)]));
    it('deletes a key whose other projects are gone', () => on(5).given(created, linked(9), linked(10)).when(unlink(9, [9])).then([unlinked(9), deleted]));
    it('answers 404 Deploy Key when not enabled in the project', () => {
      on(5).given(created, linked(9)).when(unlink(10, [9])).then(rejected('not_found', { subject: 'Deploy Key' }));
    });
  });

  it('claims the fingerprint on creation and gives it back on deletion', () => {
    const state = on(5).given(created, linked(9)).state;
    const claim = { kind: 'key_fingerprint', key: PARSED.fingerprint };
    expect(deployKeyClaims(created, deployKeyDecider.initialState(5)).acquire).toMatchObject([claim]);
    expect(deployKeyClaims(deleted, state).release).toMatchObject([claim]);
    expect(deployKeyClaims(linked(10), state)).toEqual({ acquire: [], release: [] });
  });

  it('indexes the events by project and key', () => {
    expect(deployKeyEventIndex(linked(9))).toEqual({ projectId: 9, targetType: 'DeployKey', targetId: 5 });
    expect(deployKeyEventIndex(created)).toEqual({ targetType: 'DeployKey', targetId: 5 });
  });
});
