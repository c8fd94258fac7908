import { createHash } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../database/database.js';
import { GENESIS_HASH, eventHash, sha256, type HashedFields } from './hash.js';
import { appendLeaves, treeEnd } from './log-tree.js';
import { nodeHash } from './merkle-tree.js';
import { afterCheckpoint, BELOW_HORIZON, heldBack } from './store.js';
import type { EventSealsTable, EventsTable } from './tables.js';
import { LOG_START, compareCheckpoints, type Checkpoint } from './types.js';
import { heardAllAlong, sleep } from './waits.js';

/**
 * Seals (DESIGN.md guarantee 5): digests over consecutive ranges of the global log, in
 * gap-free order, chained to each other.
 *
 * - A range is every event from `first` to `last` inclusive in (transaction_id,
 *   global_position) order. Ranges follow each other with nothing in between.
 * - Its Merkle root is RFC 6962's Merkle Tree Hash over the range's leaves, in order:
 *     leaf  = SHA-256(0x00 ‖ "<global_position>:<stored hash>:<content digest>")
 *     node  = SHA-256(0x01 ‖ left ‖ right)            (raw 32-byte digests)
 *   An odd node is not duplicated: the tree splits at the largest power of two below n
 *   (equivalently, built bottom-up, a lone last node is carried up unchanged), so no two
 *   different leaf lists share a root (duplication is Bitcoin's CVE-2012-2459). The 0x00 /
 *   0x01 prefixes keep a leaf from passing for an inner node. The content digest is
 *   recomputed from the stored row (`contentDigest`), so a seal finds an altered event on
 *   its own, even one whose stored hash was left alone or whose stream chain was forged
 *   anew; the stored hash binds the stream chains to the seal; the position finds
 *   renumbered events.
 * - seal_hash = SHA-256("forgelog-seal-v1\n" previous_seal_hash \n first_position \n
 *   last_position \n event_count \n merkle_root), previous_seal_hash of the first seal being
 *   GENESIS_HASH. Transaction ids are deliberately left out of both digests: they are the
 *   one column a re-base after dump/restore rewrites (rebase.ts), order-preservingly.
 * - In the seal's transaction the same events become leaves of the log's one Merkle tree
 *   (log-tree.ts; leaf data = the event's stored hash), so the tree covers exactly the
 *   sealed events, and signed tree heads (tree-heads.ts) can be published over it.
 */

export type SealRow = Selectable<EventSealsTable>;

/** What the digests cover; a seal row, or a line of an exported seals file. */
export interface SealRecord {
  readonly id?: number | string;
  readonly first_transaction_id: string;
  readonly first_position: string;
  readonly last_transaction_id: string;
  readonly last_position: string;
  readonly event_count: number;
  readonly merkle_root: string;
  readonly previous_seal_hash: string;
  readonly seal_hash: string;
}

/** What a leaf covers: an event as stored (hash.ts's fields, its position and stored hash). */
export interface LeafFields extends HashedFields {
  globalPosition: string;
  hash: string;
}

/** Digest of an event's canonical bytes alone, outside any chain (eventHash with no previous hash). */
export function contentDigest(event: HashedFields): string {
  return eventHash('', event);
}

/** `content`: the event's content digest when already computed (eventDigests). */
export function merkleLeaf(event: LeafFields, content: string = contentDigest(event)): Buffer {
  return sha256(`\0${event.globalPosition}:${event.hash}:${content}`);
}

/**
 * Builds a Merkle root incrementally in O(log n) memory: a stack of perfect subtrees,
 * merged like a binary counter, then folded right to left at the end.
 */
export class MerkleBuilder {
  private readonly stack: { height: number; hash: Buffer }[] = [];
  count = 0;

  add(event: LeafFields, content?: string): void {
    this.addLeaf(merkleLeaf(event, content));
  }

  addLeaf(leaf: Buffer): void {
    this.count += 1;
    let node = { height: 0, hash: leaf };
    for (let top = this.stack.at(-1); top && top.height === node.height; top = this.stack.at(-1)) {
      this.stack.pop();
      node = { height: node.height + 1, hash: nodeHash(top.hash, node.hash) };
    }
    this.stack.push(node);
  }

  /** The root in hex; the empty tree's root is SHA-256 of nothing (RFC 6962). */
  root(): string {
    if (this.stack.length === 0) return createHash('sha256').digest('hex');
    let hash = this.stack[this.stack.length - 1]!.hash;
    for (let i = this.stack.length - 2; i >= 0; i--) hash = nodeHash(this.stack[i]!.hash, hash);
    return hash.toString('hex');
  }
}

export function merkleRoot(events: Iterable<LeafFields>): string {
  const builder = new MerkleBuilder();
  for (const event of events) builder.add(event);
  return builder.root();
}

/** A stored row's leaf fields, with its transaction id (verify's gap-free order needs it), in one object. */
export function leafFieldsOfRow(row: Selectable<EventsTable>): LeafFields & { transactionId: string } {
  return {
    globalPosition: row.global_position,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    eventId: row.event_id,
    type: row.event_type,
    schemaVersion: row.schema_version,
    data: row.data,
    metadata: row.metadata,
    occurredAt: row.occurred_at,
    hash: row.hash,
    transactionId: row.transaction_id,
  };
}

/**
 * Stored rows after a checkpoint in gap-free order (as store.ts's readAllAfter, but raw:
 * no upcasting, since digests cover events as stored).
 */
export async function readRowsAfter(
  db: Kysely<Database>,
  after: Checkpoint,
  limit: number,
  streamId?: string,
): Promise<Selectable<EventsTable>[]> {
  let query = db
    .selectFrom('events')
    .selectAll()
    .where(afterCheckpoint(after))
    .where(BELOW_HORIZON);
  if (streamId !== undefined) query = query.where('stream_id', '=', streamId);
  return query.orderBy('transaction_id').orderBy('global_position').limit(limit).execute();
}

const checkpointOfRow = (row: Selectable<EventsTable>): Checkpoint => ({ transactionId: row.transaction_id, globalPosition: row.global_position });
const treeLeafOfRow = (row: Selectable<EventsTable>) => ({ globalPosition: row.global_position, hash: row.hash });

export function sealHash(seal: Omit<SealRecord, 'seal_hash' | 'first_transaction_id' | 'last_transaction_id'>): string {
  const body = ['forgelog-seal-v1', seal.previous_seal_hash, seal.first_position, seal.last_position, String(seal.event_count), seal.merkle_root];
  return createHash('sha256').update(body.join('\n')).digest('hex');
}

export const sealStart = (seal: SealRecord): Checkpoint => ({ transactionId: seal.first_transaction_id, globalPosition: seal.first_position });
export const sealEnd = (seal: SealRecord): Checkpoint => ({ transactionId: seal.last_transaction_id, globalPosition: seal.last_position });

/** Advisory lock key (two-int form) held by whoever writes seals or re-bases them. */
export const SEAL_LOCK = sql`pg_advisory_xact_lock(${0x666f7267}, 1)`; // 'forg', 1

export async function lastSeal(db: Kysely<Database>): Promise<SealRow | undefined> {
  return db.selectFrom('event_seals').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export interface SealOptions {
  /** Largest range one seal covers (default 1000). */
  maxEventsPerSeal?: number;
  /** Leave a tail shorter than this unsealed for now (default 1: seal whatever is there). */
  minEventsPerSeal?: number;
  /** Stop after this many seals (default: until nothing sealable is left). */
  maxSeals?: number;
  /** Stop between two seals once aborted (each seal is its own transaction). */
  signal?: AbortSignal;
}

export interface SealResult {
  seals: number;
  events: number;
  /** The newest seal's hash after this call (GENESIS_HASH if there is none). */
  headSealHash: string;
  /** Committed events wait past the seals that the gap-free read could not see yet (store.ts heldBack). */
  heldBack: boolean;
}

/**
 * Seals everything sealable now: the events readable in gap-free order after the last
 * seal, in ranges of at most `maxEventsPerSeal`. One short transaction per seal (a write
 * transaction holds back every gap-free reader while open). Idempotent and safe to run
 * from several processes: each seal is written under a transaction-scoped advisory lock
 * after re-reading the chain head, and unique indexes on first_position and
 * previous_seal_hash (migration 0012_kernel) refuse a forked or repeated range anyway.
 */
export async function sealPending(db: Kysely<Database>, options: SealOptions = {}): Promise<SealResult> {
  const max = Math.max(1, options.maxEventsPerSeal ?? 1000);
  const min = Math.max(1, options.minEventsPerSeal ?? 1);
  const result: SealResult = { seals: 0, events: 0, headSealHash: GENESIS_HASH, heldBack: false };
  for (;;) {
    if (options.maxSeals !== undefined && result.seals >= options.maxSeals) break;
    if (options.signal?.aborted) break;
    const sealed = await db.transaction().execute(async (trx): Promise<{ count: number; hash: string; end: Checkpoint; shortTail?: boolean; backfilled?: number }> => {
      await sql`select ${SEAL_LOCK}`.execute(trx);
      const head = await lastSeal(trx);
      const after = head ? sealEnd(head) : LOG_START;
      // The log tree ends where the seals end; a database sealed before the tree existed
      // (migration 0057) gets the leaves of its sealed events first, a page per transaction.
      const tree = await treeEnd(trx);
      if (compareCheckpoints(tree.after, after) < 0) {
        const behind = (await readRowsAfter(trx, tree.after, max)).filter((row) => compareCheckpoints(checkpointOfRow(row), after) <= 0);
        if (behind.length > 0) {
          await appendLeaves(trx, tree.size, behind.map(treeLeafOfRow));
          return { count: 0, hash: head?.seal_hash ?? GENESIS_HASH, end: after, backfilled: behind.length };
        }
      }
      const rows = await readRowsAfter(trx, after, max);
      if (rows.length < min || rows.length === 0) return { count: 0, hash: head?.seal_hash ?? GENESIS_HASH, end: after, shortTail: rows.length > 0 };
      // Past the seals only if seals were removed behind the sealer's back: the tree keeps its leaves.
      await appendLeaves(trx, tree.size, rows.filter((row) => compareCheckpoints(checkpointOfRow(row), tree.after) > 0).map(treeLeafOfRow));
      const first = rows[0]!;
      const last = rows[rows.length - 1]!;
      const seal = {
        first_transaction_id: first.transaction_id,
        first_position: first.global_position,
        last_transaction_id: last.transaction_id,
        last_position: last.global_position,
        event_count: rows.length,
        merkle_root: merkleRoot(rows.map(leafFieldsOfRow)),
        previous_seal_hash: head?.seal_hash ?? GENESIS_HASH,
      };
      const hash = sealHash(seal);
      await trx
        .insertInto('event_seals')
        .values({ ...seal, seal_hash: hash, created_at: sql<string>`now()` })
        .execute();
      return { count: rows.length, hash, end: checkpointOfRow(last) };
    });
    result.headSealHash = sealed.hash;
    if ((sealed.backfilled ?? 0) > 0) continue;
    if (sealed.count > 0) {
      result.seals += 1;
      result.events += sealed.count;
    }
    if (sealed.count < max) {
      // Read all it could see: anything past it is held back by a running transaction.
      result.heldBack = !sealed.shortTail && (await heldBack(db, sealed.end));
      break;
    }
  }
  return result;
}

export interface SealWorkerOptions extends SealOptions {
  /** Time between rounds (default 5 s); a notifier wake-up starts a round sooner. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** How long to wait when nothing wakes the loop, asked each round (default: intervalMs). */
  idleMs?: () => number;
  /** Wake-up hint (Notifier.onAppended); polling runs anyway. */
  onAppended?: (wake: () => void) => () => void;
  onSealed?: (result: SealResult) => void;
  /** A failed round is reported here and retried next round (default: ignored). */
  onError?: (error: unknown) => void;
  /**
   * Runs after each round (the runtime publishes signed tree heads here); may ask to be
   * woken sooner than the idle wait (a head due in `wakeInMs`).
   */
  afterRound?: () => Promise<{ wakeInMs?: number }>;
}

/** First retry while a transaction elsewhere holds the horizon below committed events; doubles per round. */
const HELD_BACK_RETRY_MS = 50;

/**
 * The seal worker loop: `sealPending` every `intervalMs` (or on an append hint, at most
 * once a second) until the signal aborts; while committed events wait behind the horizon,
 * sooner, backing off from 50 ms. Resolves when stopped.
 */
export async function runSealWorker(db: Kysely<Database>, options: SealWorkerOptions = {}): Promise<void> {
  const interval = options.intervalMs ?? 5000;
  const { signal } = options;
  const wakeups = heardAllAlong(options.onAppended);
  let heldBackRounds = 0;
  try {
    while (!signal?.aborted) {
      let wakeInMs: number | undefined;
      try {
        const result = await sealPending(db, options);
        if (result.seals > 0) options.onSealed?.(result);
        heldBackRounds = result.heldBack ? heldBackRounds + 1 : 0;
        if (result.heldBack) wakeInMs = Math.min(HELD_BACK_RETRY_MS * 2 ** Math.min(heldBackRounds - 1, 6), interval);
        if (options.afterRound) {
          const due = (await options.afterRound()).wakeInMs;
          if (due !== undefined) wakeInMs = Math.min(due, wakeInMs ?? due);
        }
      } catch (error) {
        options.onError?.(error);
      }
      const idle = options.idleMs?.() ?? interval;
      await sleep(wakeInMs === undefined ? idle : Math.min(idle, wakeInMs), signal, wakeups.subscribe, 1000);
    }
  } finally {
    wakeups.close();
  }
}

