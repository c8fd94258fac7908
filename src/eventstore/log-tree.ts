import { sql, type Kysely } from 'kysely';
import type { Database } from '../database/database.js';
import {
  TreeBuilder,
  consistencyRanges,
  inclusionRanges,
  leafHashOfHex,
  perfectNodes,
  rangeHash,
  type NodeKey,
  type Range,
  type StoredNode,
} from './merkle-tree.js';
import { LOG_START, type Checkpoint } from './types.js';

/**
 * The log as one RFC 6962 Merkle tree (docs/log-evidence.md), kept in the database so a
 * root or a proof costs O(log n) rows: leaf i is the i-th event the sealer reads (gap-free
 * order), its data the event's stored 32-byte hash; every complete perfect subtree is
 * stored as it completes (migration 0057). The sealer appends in the transaction of each
 * seal (seal.ts), so the tree covers exactly the sealed events.
 */

/** Leaf data: the event's stored hash (hex) as its 32 bytes. */
export const leafOfEventHash = (hash: string): Buffer => leafHashOfHex(hash);

export interface TreeEnd {
  size: number;
  /** The gap-free position of the last leaf's event (LOG_START for the empty tree). */
  after: Checkpoint;
}

export async function treeSize(db: Kysely<Database>): Promise<number> {
  const last = await db.selectFrom('log_tree_leaves').select('leaf_index').orderBy('leaf_index', 'desc').limit(1).executeTakeFirst();
  return last ? Number(last.leaf_index) + 1 : 0;
}

/** Where the tree ends in the log. Throws when its last leaf names an event that is gone (the log was altered). */
export async function treeEnd(db: Kysely<Database>): Promise<TreeEnd> {
  const last = await db.selectFrom('log_tree_leaves').select(['leaf_index', 'global_position']).orderBy('leaf_index', 'desc').limit(1).executeTakeFirst();
  if (!last) return { size: 0, after: LOG_START };
  const event = await db.selectFrom('events').select('transaction_id').where('global_position', '=', last.global_position).executeTakeFirst();
  if (!event) throw new Error(`the log tree's last leaf (${last.leaf_index}) is the event at position ${last.global_position}, which is gone: the log was altered (forgelog events verify)`);
  return { size: Number(last.leaf_index) + 1, after: { transactionId: event.transaction_id, globalPosition: last.global_position } };
}

/** Reads the stored hashes of the given perfect nodes (two queries at most); a node not stored is missing from the map. */
export async function readNodes(db: Kysely<Database>, keys: readonly NodeKey[]): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  const leaves = [...new Set(keys.filter((k) => k.level === 0).map((k) => String(k.index)))];
  const inner = keys.filter((k) => k.level > 0);
  if (leaves.length > 0) {
    const rows = await db.selectFrom('log_tree_leaves').select(['leaf_index', 'leaf_hash']).where('leaf_index', 'in', leaves).execute();
    for (const row of rows) found.set(`0/${row.leaf_index}`, Buffer.from(row.leaf_hash));
  }
  if (inner.length > 0) {
    const rows = await db
      .selectFrom('log_tree_nodes')
      .select(['level', 'node_index', 'hash'])
      .where(sql<boolean>`(level, node_index) in (${sql.join(inner.map((k) => sql`(${k.level}::smallint, ${String(k.index)}::bigint)`))})`)
      .execute();
    for (const row of rows) found.set(`${row.level}/${row.node_index}`, Buffer.from(row.hash));
  }
  return found;
}

/** The hashes of ranges of the tree, from their perfect nodes read in one go. */
async function rangeHashes(db: Kysely<Database>, ranges: readonly Range[]): Promise<Buffer[]> {
  const keys = ranges.flatMap((r) => perfectNodes(r));
  const nodes = await readNodes(db, keys);
  return ranges.map((range) =>
    rangeHash(range, (node) => {
      const hash = nodes.get(`${node.level}/${node.index}`);
      if (!hash) throw new Error(`the log tree has no node ${node.level}/${node.index}: its tables were altered (forgelog events verify)`);
      return hash;
    }),
  );
}

/** The root of the tree's first `size` leaves (size ≤ the tree's size). */
export async function rootAt(db: Kysely<Database>, size: number): Promise<Buffer> {
  const [root] = await rangeHashes(db, [{ start: 0, end: size }]);
  return root!;
}

/** RFC 6962 PROOF(first, D[second]) from the stored nodes. */
export async function consistencyProof(db: Kysely<Database>, first: number, second: number): Promise<Buffer[]> {
  return rangeHashes(db, consistencyRanges(first, second));
}

/** RFC 6962 PATH(leafIndex, D[size]) from the stored nodes. */
export async function inclusionProof(db: Kysely<Database>, leafIndex: number, size: number): Promise<Buffer[]> {
  return rangeHashes(db, inclusionRanges(leafIndex, size));
}

/** The leaf of the event at a log position, if the tree holds it. */
export async function leafAtPosition(db: Kysely<Database>, position: string): Promise<{ leafIndex: number; leafHash: Buffer } | undefined> {
  const row = await db.selectFrom('log_tree_leaves').select(['leaf_index', 'leaf_hash']).where('global_position', '=', position).executeTakeFirst();
  return row ? { leafIndex: Number(row.leaf_index), leafHash: Buffer.from(row.leaf_hash) } : undefined;
}

const INSERT_CHUNK = 1000;

/**
 * Appends events (in gap-free order, after the tree's end) as leaves, and every perfect node
 * they complete: the tree's peaks are read once (O(log n) rows), then O(1) hashes and rows
 * per leaf amortised. Run it inside the seal's transaction, under its lock.
 */
export async function appendLeaves(db: Kysely<Database>, size: number, events: readonly { globalPosition: string; hash: string }[]): Promise<number> {
  if (events.length === 0) return size;
  const peaks = perfectNodes({ start: 0, end: size });
  const stored = await readNodes(db, peaks);
  const builder = new TreeBuilder(
    size,
    peaks.map((p): StoredNode => {
      const hash = stored.get(`${p.level}/${p.index}`);
      if (!hash) throw new Error(`the log tree has no node ${p.level}/${p.index}: its tables were altered (forgelog events verify)`);
      return { ...p, hash };
    }),
  );
  const leaves: { leaf_index: string; global_position: string; leaf_hash: Buffer }[] = [];
  const nodes: { level: number; node_index: string; hash: Buffer }[] = [];
  for (const event of events) {
    for (const node of builder.push(leafOfEventHash(event.hash))) {
      if (node.level === 0) leaves.push({ leaf_index: String(node.index), global_position: event.globalPosition, leaf_hash: node.hash });
      else nodes.push({ level: node.level, node_index: String(node.index), hash: node.hash });
    }
  }
  for (let i = 0; i < leaves.length; i += INSERT_CHUNK) await db.insertInto('log_tree_leaves').values(leaves.slice(i, i + INSERT_CHUNK)).execute();
  for (let i = 0; i < nodes.length; i += INSERT_CHUNK) await db.insertInto('log_tree_nodes').values(nodes.slice(i, i + INSERT_CHUNK)).execute();
  return builder.size;
}
