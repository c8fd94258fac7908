import sshpk from 'sshpk';
import type { FieldErrors } from './errors.js';

/**
 * SSH public keys as GitLab 12's Key model validates them (app/models/key.rb,
 * lib/gitlab/ssh_public_key.rb), parsed by sshpk: a well-kept library parses SSH keys
 * better than code we would write. Pure: no I/O.
 */

/** Gitlab::SSHPublicKey's technologies. */
export const SSH_KEY_TYPES = ['rsa', 'dsa', 'ecdsa', 'ed25519'] as const;
export type SshKeyType = (typeof SSH_KEY_TYPES)[number];

/** Gitlab::SSHPublicKey's supported sizes per type: what a key restriction may require (with 0 and -1). */
export const SSH_KEY_SIZES: Readonly<Record<SshKeyType, readonly number[]>> = {
  rsa: [1024, 2048, 3072, 4096],
  dsa: [1024, 2048, 3072],
  ecdsa: [256, 384, 521],
  ed25519: [256],
};

export interface PublicKey {
  readonly type: SshKeyType;
  readonly bits: number;
  /** MD5, colon-separated hex: GitLab 12's `fingerprint` column. */
  readonly fingerprint: string;
  /** SHA256, base64 without padding or prefix: GitLab 12's `fingerprint_sha256`. */
  readonly fingerprintSha256: string;
}

/**
 * The instance's key restrictions (application settings `<type>_key_restriction`):
 * 0 no restriction, -1 the type is forbidden, N the minimum size in bits.
 */
export interface KeyRestrictions {
  readonly rsa_key_restriction: number;
  readonly dsa_key_restriction: number;
  readonly ecdsa_key_restriction: number;
  readonly ed25519_key_restriction: number;
}

/** ApplicationSetting::FORBIDDEN_KEY_VALUE */
export const FORBIDDEN_KEY_VALUE = -1;

export const NO_KEY_RESTRICTIONS: KeyRestrictions = { rsa_key_restriction: 0, dsa_key_restriction: 0, ecdsa_key_restriction: 0, ed25519_key_restriction: 0 };

/** Key: `validates :title, length: { maximum: 255 }`, `validates :key, length: { maximum: 5000 }`. */
const TITLE_MAX = 255;
const KEY_MAX = 5000;

/** The algorithm names of the four types, as the key text starts (the sshkey gem's SSH_TYPES). */
const ALGORITHMS: Readonly<Record<string, SshKeyType>> = {
  'ssh-rsa': 'rsa',
  'ssh-dss': 'dsa',
  'ecdsa-sha2-nistp256': 'ecdsa',
  'ecdsa-sha2-nistp384': 'ecdsa',
  'ecdsa-sha2-nistp521': 'ecdsa',
  'ssh-ed25519': 'ed25519',
};

/** The key a text holds (`<algorithm> <base64> [comment]`), or null when it is not a valid public key of a supported type. */
export function parsePublicKey(text: string): PublicKey | null {
  const algorithm = text.trim().split(/\s+/)[0] ?? '';
  const expected = ALGORITHMS[algorithm];
  if (!expected) return null;
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(text, 'ssh');
  } catch {
    return null;
  }
  if (key.type !== expected) return null;
  return {
    type: expected,
    // Gitlab::SSHPublicKey#bits: ed25519 is 256; the others the modulus, prime or curve order size.
    bits: expected === 'ed25519' ? 256 : key.size,
    fingerprint: key.fingerprint('md5').toString('hex'),
    fingerprintSha256: key.fingerprint('sha256').toString('base64').replace(/^SHA256:/, ''),
  };
}

/**
 * Gitlab::SSHPublicKey.sanitize: a key pasted with line breaks or spaces inside its base64 is
 * joined back, part by part, until it parses; the comment keeps its first word only. A text
 * that never parses is kept as it is.
 */
export function sanitizeKey(text: string): string {
  const [type, ...parts] = text.trim().split(/\s+/);
  if (parts.length === 0) return text;
  let content = `${type} `;
  for (let i = 0; i < parts.length; i++) {
    content += parts[i];
    // No key GitLab accepts is longer than KEY_MAX: stop before the attempts grow quadratic.
    if (content.length > KEY_MAX) break;
    if (parsePublicKey(content)) return [content, parts[i + 1]].filter((p) => p !== undefined).join(' ');
  }
  return text;
}

const restrictionOf = (type: SshKeyType | null, restrictions: KeyRestrictions) =>
  type === null ? FORBIDDEN_KEY_VALUE : restrictions[`${type}_key_restriction`];

/** Rails' to_sentence(last_word_connector: ', or ', two_words_connector: ' or '). */
function sentence(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  if (words.length === 2) return `${words[0]} or ${words[1]}`;
  return `${words.slice(0, -1).join(', ')}, or ${words.at(-1)}`;
}

/**
 * Key#key_meets_restrictions: the messages on `key` for a key the instance's restrictions
 * refuse. A key that does not parse has no type, and no type is allowed.
 */
export function keyRestrictionErrors(key: Pick<PublicKey, 'type' | 'bits'> | null, restrictions: KeyRestrictions): string[] {
  const restriction = restrictionOf(key?.type ?? null, restrictions);
  if (restriction === FORBIDDEN_KEY_VALUE) {
    const allowed = SSH_KEY_TYPES.filter((type) => restrictionOf(type, restrictions) !== FORBIDDEN_KEY_VALUE).map((type) => type.toUpperCase());
    return [`type is forbidden. Must be ${sentence(allowed)}`];
  }
  if (key && key.bits < restriction) return [`must be at least ${restriction} bits`];
  return [];
}

/** Ruby's `\A(ssh|ecdsa)-.*\Z`: one line (a final line break aside) starting with ssh- or ecdsa-. */
const KEY_FORMAT = /^(ssh|ecdsa)-[^\n]*\n?$/;

/**
 * The Key model's validations, in their order, on a sanitized key text: title, key,
 * fingerprint (taken or not generated), then the restrictions. Empty when the key is valid.
 */
export function keyErrors(title: string, key: string, restrictions: KeyRestrictions, fingerprintTaken: boolean): FieldErrors {
  const parsed = parsePublicKey(key);
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  for (const message of titleErrors(title)) add('title', message);
  if (key.trim() === '') add('key', "can't be blank");
  if (key.length > KEY_MAX) add('key', `is too long (maximum is ${KEY_MAX} characters)`);
  if (!KEY_FORMAT.test(key)) add('key', 'is invalid');
  if (parsed && fingerprintTaken) add('fingerprint', 'has already been taken');
  if (!parsed) add('fingerprint', 'cannot be generated');
  for (const message of keyRestrictionErrors(parsed, restrictions)) add('key', message);
  return errors;
}

/** Title validations alone (a title changed on an existing key). */
export function titleErrors(title: string): string[] {
  const errors: string[] = [];
  if (title.trim() === '') errors.push("can't be blank");
  if (title.length > TITLE_MAX) errors.push(`is too long (maximum is ${TITLE_MAX} characters)`);
  return errors;
}
