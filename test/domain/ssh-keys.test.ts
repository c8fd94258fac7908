import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyErrors, keyRestrictionErrors, NO_KEY_RESTRICTIONS, parsePublicKey, sanitizeKey, type KeyRestrictions } from '../../src/domain/ssh-keys.js';
import { sshPublicKey, type TestKeyKind } from '../support/ssh-keys.js';

const sshKeygen = (() => {
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    return (error as { code?: string }).code !== 'ENOENT';
  }
})();

const restrictions = (overrides: Partial<KeyRestrictions> = {}): KeyRestrictions => ({ ...NO_KEY_RESTRICTIONS, ...overrides });

describe('parsePublicKey (Gitlab::SSHPublicKey: type, bits, fingerprint)', () => {
  it.each<[TestKeyKind, string, number]>([
    ['rsa1024', 'rsa', 1024],
    ['rsa2048', 'rsa', 2048],
    ['dsa', 'dsa', 1024],
    ['ecdsa256', 'ecdsa', 256],
    ['ecdsa384', 'ecdsa', 384],
    ['ecdsa521', 'ecdsa', 521],
    ['ed25519', 'ed25519', 256],
  ])('reads a %s key as %s of %i bits', (kind, type, bits) => {
    const parsed = parsePublicKey(sshPublicKey(kind));
    expect(parsed).toMatchObject({ type, bits });
    expect(parsed!.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
    expect(parsed!.fingerprintSha256).toMatch(/^[A-Za-z0-9+/]{43}$/);
  });

  it.each(['', 'foo', 'ssh-rsa', 'ssh-rsa AAAAB3Nza', 'ssh-foo AAAAC3NzaC1lZDI1NTE5AAAAIDXoVyk9dnVTGtvzUkuQIz', '-----BEGIN PUBLIC KEY-----'])('refuses %j', (text) => {
    expect(parsePublicKey(text)).toBeNull();
  });

  it('refuses a key whose algorithm name is not the one inside it', () => {
    const [, blob] = sshPublicKey('ed25519').split(' ');
    expect(parsePublicKey(`ssh-rsa ${blob}`)).toBeNull();
  });

  it.skipIf(!sshKeygen)('agrees with ssh-keygen on keys it made (MD5 and SHA256 fingerprints, bits)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgelog-keys-'));
    try {
      for (const [type, bits] of [['rsa', '3072'], ['ecdsa', '384'], ['ed25519', '256']] as const) {
        const file = join(dir, type);
        execFileSync('ssh-keygen', ['-q', '-t', type, '-b', bits, '-N', '', '-C', 'ci@forgelog', '-f', file]);
        const text = readFileSync(`${file}.pub`, 'utf8').trim();
        const md5 = execFileSync('ssh-keygen', ['-l', '-E', 'md5', '-f', `${file}.pub`], { encoding: 'utf8' });
        const sha256 = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], { encoding: 'utf8' });
        const parsed = parsePublicKey(text)!;
        expect(md5).toContain(`MD5:${parsed.fingerprint} `);
        expect(sha256).toContain(`SHA256:${parsed.fingerprintSha256} `);
        expect(md5.startsWith(`${parsed.bits} `)).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sanitizeKey (Gitlab::SSHPublicKey.sanitize)', () => {
  const key = sshPublicKey('ed25519', 'me@host');
  const [type, blob] = key.split(' ') as [string, string];

  it('keeps a well-formed key', () => expect(sanitizeKey(key)).toBe(key));
  it('joins a base64 broken over lines and keeps the first word of the comment', () => {
    expect(sanitizeKey(`${type} ${blob.slice(0, 20)}\n${blob.slice(20)} me@host and more`)).toBe(`${type} ${blob} me@host`);
  });
  it('keeps a text that never parses as it is', () => expect(sanitizeKey('ssh-rsa not a key')).toBe('ssh-rsa not a key'));
  it('keeps a single word', () => expect(sanitizeKey('foo')).toBe('foo'));
  it('gives up on a text past the longest key allowed instead of parsing it part by part', () => {
    const hostile = `ssh-rsa ${'AAAA '.repeat(100_000)}`;
    const started = Date.now();
    expect(sanitizeKey(hostile)).toBe(hostile);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('keyRestrictionErrors (Key#key_meets_restrictions)', () => {
  const rsa1024 = { type: 'rsa', bits: 1024 } as const;
  const ed25519 = { type: 'ed25519', bits: 256 } as const;

  it('lets everything through with no restriction', () => {
    expect(keyRestrictionErrors(rsa1024, NO_KEY_RESTRICTIONS)).toEqual([]);
    expect(keyRestrictionErrors(ed25519, NO_KEY_RESTRICTIONS)).toEqual([]);
  });

  it('asks for the minimum size', () => {
    expect(keyRestrictionErrors(rsa1024, restrictions({ rsa_key_restriction: 2048 }))).toEqual(['must be at least 2048 bits']);
    expect(keyRestrictionErrors({ type: 'rsa', bits: 2048 }, restrictions({ rsa_key_restriction: 2048 }))).toEqual([]);
  });

  it('names the allowed types of a forbidden one, in a sentence', () => {
    expect(keyRestrictionErrors(rsa1024, restrictions({ rsa_key_restriction: -1 }))).toEqual(['type is forbidden. Must be DSA, ECDSA, or ED25519']);
    expect(keyRestrictionErrors(rsa1024, restrictions({ rsa_key_restriction: -1, dsa_key_restriction: -1 }))).toEqual(['type is forbidden. Must be ECDSA or ED25519']);
    expect(keyRestrictionErrors(rsa1024, restrictions({ rsa_key_restriction: -1, dsa_key_restriction: -1, ecdsa_key_restriction: -1 }))).toEqual([
      'type is forbidden. Must be ED25519',
    ]);
  });

  it('forbids a key without a type (one that does not parse)', () => {
    expect(keyRestrictionErrors(null, NO_KEY_RESTRICTIONS)).toEqual(['type is forbidden. Must be RSA, DSA, ECDSA, or ED25519']);
  });

  it('leaves the other types alone', () => {
    expect(keyRestrictionErrors(ed25519, restrictions({ rsa_key_restriction: -1, dsa_key_restriction: 4096 }))).toEqual([]);
  });
});

describe('keyErrors (the Key model validations, in order)', () => {
  const key = sshPublicKey('ed25519');

  it('accepts a valid key', () => expect(keyErrors('title', key, NO_KEY_RESTRICTIONS, false)).toEqual({}));

  it('answers an invalid key with its format, type and fingerprint', () => {
    expect(keyErrors('title', 'some key', NO_KEY_RESTRICTIONS, false)).toEqual({
      key: ['is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'],
      fingerprint: ['cannot be generated'],
    });
  });

  it('answers blanks and lengths', () => {
    expect(keyErrors(' ', '', NO_KEY_RESTRICTIONS, false)).toEqual({
      title: ["can't be blank"],
      key: ["can't be blank", 'is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'],
      fingerprint: ['cannot be generated'],
    });
    expect(keyErrors('t'.repeat(256), key, NO_KEY_RESTRICTIONS, false)).toEqual({ title: ['is too long (maximum is 255 characters)'] });
    expect(keyErrors('t', `${key}${' x'.repeat(2500)}`, NO_KEY_RESTRICTIONS, false).key).toEqual(['is too long (maximum is 5000 characters)']);
  });

  it('answers a taken fingerprint', () => {
    expect(keyErrors('title', key, NO_KEY_RESTRICTIONS, true)).toEqual({ fingerprint: ['has already been taken'] });
  });

  it('applies the restrictions', () => {
    expect(keyErrors('title', key, restrictions({ ed25519_key_restriction: -1 }), false)).toEqual({ key: ['type is forbidden. Must be RSA, DSA, or ECDSA'] });
  });
});
