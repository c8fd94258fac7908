import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../database/database.js';
import { instanceKey } from './instance-keys.js';

/**
 * Secrets sealed with AES-256-GCM under an instance key (table `instance_keys`, outside the
 * event log; each key made by the migration of the area that needs it). `context` is the
 * authenticated data — what the secret is (an attribute's name, an integration's field) — so
 * a sealed value cannot be moved to another place and opened there.
 *
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
const keyOf = async (db: Db, keyName: string) => Buffer.from(await instanceKey(db, keyName), 'hex');

export async function seal(db: Db, keyName: string, context: string, plaintext: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await keyOf(db, keyName), iv);
  cipher.setAAD(Buffer.from(context));
  const encrypted = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), encrypted.toString('base64url')].join('.');
}

export async function unseal(db: Db, keyName: string, context: string, sealed: string): Promise<string> {
  return open(await keyOf(db, keyName), context, sealed);
}

/**
 * As `unseal`, but null for a value this instance's key does not open (sealed under another
 * instance's key: a log imported with `forgelog events import`). Reading the key may still
 * fail (the database away): that is thrown, not taken for a foreign seal.
 */
export async function unsealIfOurs(db: Db, keyName: string, context: string, sealed: string): Promise<string | null> {
  const key = await keyOf(db, keyName);
  try {
    return open(key, context, sealed);
  } catch {
    return null;
  }
}

function open(key: Buffer, context: string, sealed: string): string {
  const [version, iv, tag, encrypted] = sealed.split('.');
  if (version !== 'v1' || iv === undefined || tag === undefined || encrypted === undefined) throw new Error(`${context}: not a sealed secret`);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(encrypted, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * A keyed fingerprint of a secret (HMAC-SHA256 under the same instance key, 16 bytes hex):
 * equal secrets in the same context give the same fingerprint, and without the key it tells
 * nothing about the value — what an event may record of a secret (whether it changed).
 */
export async function fingerprint(db: Db, keyName: string, context: string, plaintext: string): Promise<string> {
  return createHmac('sha256', await keyOf(db, keyName)).update(`fingerprint\u0000${context}\u0000${plaintext}`).digest('hex').slice(0, 32);
}
