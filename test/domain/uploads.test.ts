import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE } from '../../src/commands/users.js';
import { DomainError } from '../../src/domain/errors.js';
import { checkAvatar, sanitizeFilename, type UploadRef } from '../../src/domain/uploads.js';
import type { UserEvent } from '../../src/domain/users.js';
import { userDecider } from '../../src/domain/users/decider.js';
import { deciderSpec } from '../support/decider.js';

const PNG_START = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

const refusal = (run: () => void) => {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error.fields;
    throw error;
  }
  return undefined;
};

describe('Avatarable rules', () => {
  it('takes an image of an allowed extension up to 200 KB', () => {
    expect(refusal(() => checkAvatar('a.PNG', PNG_START))).toBeUndefined();
    const exactly = new Uint8Array(200 * 1024);
    exactly.set(PNG_START);
    expect(refusal(() => checkAvatar('a.png', exactly))).toBeUndefined();
  });

  it('refuses the format first, then the size', () => {
    const big = new Uint8Array(200 * 1024 + 1);
    expect(refusal(() => checkAvatar('a.svg', big))).toEqual({
      avatar: ['file format is not supported. Please try one of the following supported formats: png, jpg, jpeg, gif, bmp, tiff, ico', 'is too big (should be at most 200 KB)'],
    });
    expect(refusal(() => checkAvatar('a.png', new TextEncoder().encode('<svg/>')))?.avatar).toHaveLength(1);
  });

  it('sanitizes file names as CarrierWave does', () => {
    expect(sanitizeFilename('C:\\photos\\me (2).png')).toBe('me__2_.png');
    expect(sanitizeFilename('../../etc/passwd.png')).toBe('passwd.png');
    expect(sanitizeFilename('été+1.png')).toBe('été+1.png');
    expect(sanitizeFilename('..')).toBe('_..');
    expect(sanitizeFilename('')).toBe('unnamed');
  });
});

describe('a user avatar', () => {
  const avatar: UploadRef = { sha256: 'a'.repeat(64), size: 12, filename: 'me.png' };
  const created: UserEvent = {
    type: 'UserCreated',
    data: { id: 7, namespace_id: 70, ...DEFAULT_PROFILE, name: 'Jane', username: 'jane', email: 'jane@example.com', password_hash: null, confirmed: true, password_reset_required: false },
  };
  const given = (...history: UserEvent[]) => deciderSpec(userDecider).on(7).given(...history);

  it('is recorded by hash, size and name', () => {
    given(created).when({ type: 'UpdateUser', changes: {}, passwordHash: null, avatar }).then([{ type: 'UserAvatarChanged', data: { id: 7, avatar } }]);
  });

  it('uploaded again (same bytes, same name) changes nothing', () => {
    given(created, { type: 'UserAvatarChanged', data: { id: 7, avatar } }).when({ type: 'UpdateUser', changes: {}, passwordHash: null, avatar }).then([]);
  });
});
