import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { passwordHashCost } from '../config.js';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;
// The stored hash names its own cost, so lowering it (the test suite does) never breaks
// verification of hashes made with another. Read on first use: loadConfig() checks the
// variable at start, so a bad value is a start-up error rather than a failed import.
const MAXMEM = 64 * 1024 * 1024;
let scryptParameters: { N: number; r: number; p: number; maxmem: number } | undefined;
const scryptOptions = () => (scryptParameters ??= { N: 2 ** passwordHashCost(), r: 8, p: 1, maxmem: MAXMEM });

/** A slow, salted password hash: `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const params = scryptOptions();
  const hash = await scrypt(password, salt, 32, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: MAXMEM });
  return timingSafeEqual(expected, actual);
}

/** A random password for reset_password / force_random_password. */
export const randomPassword = () => randomBytes(24).toString('base64url');

/** A new access token (20 characters, like GitLab 12's) — shown once, stored as a digest. */
export const generateToken = () => randomBytes(15).toString('base64url');

/** Tokens are high-entropy, so a fast digest keeps lookups indexable without weakening them. */
export const tokenDigest = (token: string) => createHash('sha256').update(token).digest('hex');
