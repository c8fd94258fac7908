import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../database/database.js';
import { rootAt, treeSize } from './log-tree.js';
import { SEAL_LOCK } from './seal.js';
import type { LogTreeHeadsTable } from './tables.js';

/**
 * Signed tree heads (RFC 6962 §3.5): the tree's size, its root and the time, signed with an
 * Ed25519 key kept outside the database. A head an auditor keeps is what makes the log's
 * past provable after someone with full database rights rewrote it (docs/log-evidence.md).
 *
 * What is signed is RFC 6962's TreeHeadSignature, TLS-encoded (50 bytes): version v1 (0),
 * signature_type tree_hash (1), timestamp (uint64, ms), tree_size (uint64), sha256_root_hash
 * (32 bytes). `tree_head_signature` is the TLS DigitallySigned struct around the signature:
 * hash algorithm 8 and signature algorithm 7 (ed25519, RFC 8422 §5.1.3), a uint16 length,
 * then the 64-byte Ed25519 signature.
 */

export interface TreeHead {
  treeSize: number;
  /** Milliseconds since the epoch. */
  timestamp: number;
  rootHash: Buffer;
  /** The DigitallySigned struct. */
  signature: Buffer;
}

/** RFC 6962 §4.3's JSON shape, values base64. */
export interface TreeHeadJson {
  tree_size: number;
  timestamp: number;
  sha256_root_hash: string;
  tree_head_signature: string;
}

const ED25519_INTRINSIC = Buffer.from([8, 7]);

/** The TreeHeadSignature structure's bytes. */
export function treeHeadSignatureInput(treeSize: number, timestamp: number, rootHash: Uint8Array): Buffer {
  const out = Buffer.alloc(50);
  out.writeUInt8(0, 0); // Version v1
  out.writeUInt8(1, 1); // SignatureType tree_hash
  out.writeBigUInt64BE(BigInt(timestamp), 2);
  out.writeBigUInt64BE(BigInt(treeSize), 10);
  Buffer.from(rootHash).copy(out, 18);
  return out;
}

export function signTreeHead(key: KeyObject, treeSize: number, timestamp: number, rootHash: Buffer): TreeHead {
  const raw = sign(null, treeHeadSignatureInput(treeSize, timestamp, rootHash), key);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(raw.length);
  return { treeSize, timestamp, rootHash, signature: Buffer.concat([ED25519_INTRINSIC, length, raw]) };
}

/** Whether the head's signature is the key's over its fields. */
export function verifyTreeHead(publicKey: KeyObject, head: TreeHead): boolean {
  const s = head.signature;
  if (s.length < 4 || s[0] !== 8 || s[1] !== 7 || s.readUInt16BE(2) !== s.length - 4 || head.rootHash.length !== 32) return false;
  try {
    return verify(null, treeHeadSignatureInput(head.treeSize, head.timestamp, head.rootHash), publicKey, s.subarray(4));
  } catch {
    return false;
  }
}

export function treeHeadJson(head: TreeHead): TreeHeadJson {
  return {
    tree_size: head.treeSize,
    timestamp: head.timestamp,
    sha256_root_hash: head.rootHash.toString('base64'),
    tree_head_signature: head.signature.toString('base64'),
  };
}

/** A head as an auditor kept it (the JSON of GET /-/log/head); throws with what is wrong. */
export function parseTreeHeadJson(text: string): TreeHead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('not JSON');
  }
  const head = value as Partial<Record<keyof TreeHeadJson, unknown>>;
  const whole = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  const base64 = (v: unknown) => typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v);
  if (typeof value !== 'object' || value === null) throw new Error('not a tree head object');
  if (!whole(head.tree_size)) throw new Error('tree_size must be a whole number');
  if (!whole(head.timestamp)) throw new Error('timestamp must be a whole number of milliseconds');
  if (!base64(head.sha256_root_hash) || Buffer.from(head.sha256_root_hash as string, 'base64').length !== 32) throw new Error('sha256_root_hash must be 32 bytes in base64');
  if (!base64(head.tree_head_signature)) throw new Error('tree_head_signature must be base64');
  return {
    treeSize: head.tree_size as number,
    timestamp: head.timestamp as number,
    rootHash: Buffer.from(head.sha256_root_hash as string, 'base64'),
    signature: Buffer.from(head.tree_head_signature as string, 'base64'),
  };
}

/** The Ed25519 public key (of a private or public key object) as PEM (SubjectPublicKeyInfo). */
export const publicKeyPem = (key: KeyObject): string => (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'pem' }).toString();

/** Reads an Ed25519 public key (SPKI PEM), or the public half of a private key; throws with what is wrong. */
export function parsePublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`the key is ${key.asymmetricKeyType ?? 'not asymmetric'}, not Ed25519`);
  return key;
}

const headOfRow = (row: Selectable<LogTreeHeadsTable>): TreeHead => ({
  treeSize: Number(row.tree_size),
  timestamp: Number(row.timestamp_ms),
  rootHash: Buffer.from(row.root_hash),
  signature: Buffer.from(row.signature),
});

/** The newest published head, or the one of exactly `treeSize`. */
export async function publishedHead(db: Kysely<Database>, treeSize?: number): Promise<TreeHead | undefined> {
  let query = db.selectFrom('log_tree_heads').selectAll();
  query = treeSize === undefined ? query.orderBy('tree_size', 'desc').limit(1) : query.where('tree_size', '=', String(treeSize));
  const row = await query.executeTakeFirst();
  return row ? headOfRow(row) : undefined;
}

/** Every published head, smallest first, a page at a time. */
export async function* publishedHeads(db: Kysely<Database>, pageSize = 1000): AsyncGenerator<TreeHead> {
  let after = -1;
  for (;;) {
    const rows = await db.selectFrom('log_tree_heads').selectAll().where('tree_size', '>', String(after)).orderBy('tree_size').limit(pageSize).execute();
    for (const row of rows) yield headOfRow(row);
    if (rows.length < pageSize) return;
    after = Number(rows.at(-1)!.tree_size);
  }
}

export interface PublishOptions {
  /** Publish only when the newest head is at least this old (default 0: whenever the tree grew). */
  intervalMs?: number;
  now?: () => number;
}

export interface PublishResult {
  /** The head published now, if one was. */
  published?: TreeHead;
  /** When the tree has grown past the newest head but the interval has not passed: how long until it has. */
  dueInMs?: number;
}

/**
 * Signs and stores a head over the tree as it is, when it has grown since the newest head
 * and that head is `intervalMs` old. Under the sealer's lock, so the tree does not move
 * between reading its size and its root.
 */
export async function publishTreeHead(db: Kysely<Database>, key: KeyObject, options: PublishOptions = {}): Promise<PublishResult> {
  const now = options.now ?? Date.now;
  return db.transaction().execute(async (trx) => {
    await sql`select ${SEAL_LOCK}`.execute(trx);
    const size = await treeSize(trx);
    const latest = await publishedHead(trx);
    if (size === 0 || (latest && latest.treeSize >= size)) return {};
    const at = Math.max(now(), (latest?.timestamp ?? 0) + 1);
    const wait = latest ? latest.timestamp + (options.intervalMs ?? 0) - at : 0;
    if (wait > 0) return { dueInMs: wait };
    const head = signTreeHead(key, size, at, await rootAt(trx, size));
    await trx
      .insertInto('log_tree_heads')
      .values({ tree_size: String(head.treeSize), timestamp_ms: String(head.timestamp), root_hash: head.rootHash, signature: head.signature })
      .execute();
    return { published: head };
  });
}
