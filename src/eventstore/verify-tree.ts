import type { KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../database/database.js';
import { GENESIS_HASH, eventHash } from './hash.js';
import { consistencyProof, inclusionProof, leafAtPosition, leafOfEventHash, rootAt, treeSize } from './log-tree.js';
import { TreeBuilder, verifyConsistency, verifyInclusion } from './merkle-tree.js';
import { leafFieldsOfRow } from './seal.js';
import { publishedHeads, verifyTreeHead, type TreeHead } from './tree-heads.js';

/**
 * The log's one Merkle tree checked against the log (docs/log-evidence.md): `events verify`
 * recomputes the tree over every event in gap-free order (leaf data = the stored hash) and
 * holds to it the tree the sealer stored, every signed head it published and, with
 * `--against`, a head the auditor kept outside the database; `events prove` proves one
 * event's inclusion under a kept head.
 */

export type TreeProblemKind =
  /** A signed head (kept or published) whose signature is not the log key's over its fields: forged or altered. */
  | 'head_signature_invalid'
  /** The log's first N events (gap-free order, their stored hashes) do not give a signed head's root: events of that prefix were edited, removed, inserted or reordered, even if resealed. */
  | 'head_mismatch'
  /** The log holds fewer events than a signed head covers: events were removed (its tail, with its seals or not, or any others). */
  | 'head_truncated'
  /** The stored log tree does not prove the kept head's tree a prefix of the current one. */
  | 'consistency_failed'
  /** The stored log tree is not the tree of the log's events (its tables were altered, or the events under them). */
  | 'tree_mismatch';

export interface TreeProblem {
  kind: TreeProblemKind;
  position?: string;
  /** The head's tree size, for head problems. */
  treeSize?: number;
  detail: string;
}

export interface TreeCheckOptions {
  /** A head kept outside the database (`--against head.json`). */
  keptHead?: TreeHead;
  /** The log key's public half: without it signatures are not checked (roots still are). */
  publicKey?: KeyObject;
}

const b64 = (hash: Buffer) => hash.toString('base64');

/**
 * Fed every event in gap-free order (push), then `end()`: recomputes the tree leaf by leaf,
 * compares the stored leaves a page at a time, and each signed head's root when the
 * recomputed tree reaches its size. Memory: O(log n) plus a page.
 */
export class TreeChecker {
  headsChecked = 0;
  /** Leaves the stored tree holds. */
  storedSize = 0;
  private readonly tree = new TreeBuilder();
  private readonly heads: AsyncGenerator<TreeHead>;
  private nextHead: TreeHead | undefined;
  private headsDone = false;
  private storedLeaves: { leaf_index: string; global_position: string; leaf_hash: Uint8Array }[] = [];
  private storedCursor = -1;
  private leafMismatches = 0;
  private firstLeafMismatch: { position: string; index: number } | undefined;
  private storedRootRecomputed: Buffer | undefined;
  private keptRoot: Buffer | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly problem: (p: TreeProblem) => void,
    private readonly options: TreeCheckOptions = {},
  ) {
    this.heads = publishedHeads(db);
  }

  async begin(): Promise<void> {
    this.storedSize = await treeSize(this.db);
    const kept = this.options.keptHead;
    if (kept) this.checkSignature(kept, 'the kept head');
    await this.pullHead();
    if (this.storedSize === 0) this.storedRootRecomputed = this.tree.root();
    if (kept?.treeSize === 0) this.keptRoot = this.tree.root();
    await this.checkHeadsAt(0);
  }

  /**
   * push without a promise when nothing is to be read (the stored leaf at hand, no head
   * reached): verify pushes every event, and an await each costs more than the check.
   * Answers false, having done nothing, when push must be awaited instead.
   */
  tryPush(event: { globalPosition: string; hash: string }): boolean {
    const index = this.tree.size;
    if (index < this.storedSize && this.storedLeaves.length === 0 && this.storedCursor < index) return false;
    if (this.nextHead && this.nextHead.treeSize <= index + 1) return false;
    const leaf = leafOfEventHash(event.hash);
    this.tree.push(leaf);
    const size = this.tree.size;
    if (index < this.storedSize) this.compareLeafAtHand(index, event.globalPosition, leaf);
    if (size === this.storedSize) this.storedRootRecomputed = this.tree.root();
    if (this.options.keptHead?.treeSize === size) this.keptRoot = this.tree.root();
    return true;
  }

  async push(event: { globalPosition: string; hash: string }): Promise<void> {
    const leaf = leafOfEventHash(event.hash);
    const index = this.tree.size;
    this.tree.push(leaf);
    const size = this.tree.size;
    if (index < this.storedSize) await this.compareStoredLeaf(index, event.globalPosition, leaf);
    if (size === this.storedSize) this.storedRootRecomputed = this.tree.root();
    if (this.options.keptHead?.treeSize === size) this.keptRoot = this.tree.root();
    await this.checkHeadsAt(size);
  }

  /** After the last event. */
  async end(): Promise<void> {
    const size = this.tree.size;
    while (this.nextHead) {
      this.truncated(this.nextHead, 'a published head', size);
      await this.pullHead();
    }
    if (this.leafMismatches > 0) {
      const first = this.firstLeafMismatch!;
      this.problem({
        kind: 'tree_mismatch',
        position: first.position,
        detail: `the stored log tree's leaf ${first.index} is not the event at position ${first.position} as stored${this.leafMismatches > 1 ? ` (and ${this.leafMismatches - 1} leaves after it)` : ''}: the tree or the events under it were altered`,
      });
    } else if (this.storedSize > size) {
      this.problem({ kind: 'tree_mismatch', detail: `the stored log tree holds ${this.storedSize} leaves, the log only ${size} events: events were removed` });
    } else if (this.storedRootRecomputed) {
      const stored = await rootAt(this.db, this.storedSize).catch((error: unknown) => error as Error);
      if (stored instanceof Error) this.problem({ kind: 'tree_mismatch', detail: `the stored log tree cannot give its root: ${stored.message}` });
      else if (!stored.equals(this.storedRootRecomputed)) {
        this.problem({ kind: 'tree_mismatch', detail: `the stored log tree's root over ${this.storedSize} leaves is ${b64(stored)}, its leaves give ${b64(this.storedRootRecomputed)}: its nodes were altered` });
      }
    }
    const kept = this.options.keptHead;
    if (kept) {
      if (kept.treeSize > size) this.truncated(kept, 'the kept head', size);
      else this.checkRoot(kept, 'kept head', this.keptRoot!);
      await this.checkConsistency(kept);
    }
  }

  /** The recomputed tree over every event read: its size and root. */
  current(): { size: number; root: Buffer } {
    return { size: this.tree.size, root: this.tree.root() };
  }

  /** The published heads of the tree as recomputed so far (heads come smallest first, one per size). */
  private async checkHeadsAt(size: number) {
    while (this.nextHead && this.nextHead.treeSize <= size) {
      if (this.nextHead.treeSize === size) this.checkRoot(this.nextHead, 'published head', this.tree.root());
      await this.pullHead();
    }
  }

  private async checkConsistency(kept: TreeHead) {
    const second = this.storedSize;
    if (kept.treeSize > second) {
      this.problem({ kind: 'consistency_failed', treeSize: kept.treeSize, detail: `the stored log tree holds ${second} leaves, fewer than the kept head's ${kept.treeSize}: it cannot extend it` });
      return;
    }
    try {
      const proof = await consistencyProof(this.db, kept.treeSize, second);
      const root = await rootAt(this.db, second);
      if (!verifyConsistency(kept.treeSize, second, proof, kept.rootHash, root)) {
        this.problem({
          kind: 'consistency_failed',
          treeSize: kept.treeSize,
          detail: `the log tree of ${second} leaves does not extend the kept head of ${kept.treeSize}: its consistency proof fails — the log's first ${kept.treeSize} events were rewritten`,
        });
      }
    } catch (error) {
      this.problem({ kind: 'consistency_failed', treeSize: kept.treeSize, detail: `no consistency proof from ${kept.treeSize} to ${second}: ${(error as Error).message}` });
    }
  }

  private checkSignature(head: TreeHead, what: string) {
    if (!this.options.publicKey) return;
    if (!verifyTreeHead(this.options.publicKey, head)) {
      this.problem({ kind: 'head_signature_invalid', treeSize: head.treeSize, detail: `${what} of tree size ${head.treeSize}: its signature is not the log key's over its fields — forged or altered` });
    }
  }

  private checkRoot(head: TreeHead, what: string, root: Buffer) {
    this.headsChecked += what === 'published head' ? 1 : 0;
    if (root.equals(head.rootHash)) return;
    this.problem({
      kind: 'head_mismatch',
      treeSize: head.treeSize,
      detail: `the ${what} of tree size ${head.treeSize} (signed ${new Date(head.timestamp).toISOString()}) has root ${b64(head.rootHash)}; the log's first ${head.treeSize} events give ${b64(root)}: events it covers were edited, removed, inserted or reordered`,
    });
  }

  private truncated(head: TreeHead, what: string, size: number) {
    this.headsChecked += what === 'a published head' ? 1 : 0;
    this.problem({
      kind: 'head_truncated',
      treeSize: head.treeSize,
      detail: `${what} covers ${head.treeSize} events (signed ${new Date(head.timestamp).toISOString()}); the log holds ${size}: events were removed`,
    });
  }

  private async pullHead() {
    if (this.headsDone) {
      this.nextHead = undefined;
      return;
    }
    const next = await this.heads.next();
    if (next.done) {
      this.headsDone = true;
      this.nextHead = undefined;
      return;
    }
    this.nextHead = next.value;
    this.checkSignature(next.value, 'the published head');
  }

  /** Stored leaves are read a page at a time as the recomputed tree reaches them (indices 0, 1, 2… unless rows were removed). */
  private async compareStoredLeaf(index: number, position: string, leaf: Buffer) {
    if (this.storedLeaves.length === 0 && this.storedCursor < index) {
      this.storedLeaves = await this.db.selectFrom('log_tree_leaves').selectAll().where('leaf_index', '>=', String(index)).orderBy('leaf_index').limit(1000).execute();
      this.storedCursor = this.storedLeaves.length > 0 ? Number(this.storedLeaves.at(-1)!.leaf_index) : Number.MAX_SAFE_INTEGER;
    }
    this.compareLeafAtHand(index, position, leaf);
  }

  /** compareStoredLeaf once the page holding the leaf (if stored) is read. */
  private compareLeafAtHand(index: number, position: string, leaf: Buffer) {
    const stored = this.storedLeaves[0];
    const here = stored !== undefined && Number(stored.leaf_index) === index;
    if (here) this.storedLeaves.shift();
    if (here && stored.global_position === position && Buffer.from(stored.leaf_hash).equals(leaf)) return;
    this.leafMismatches += 1;
    this.firstLeafMismatch ??= { position, index };
  }
}

// ---------------------------------------------------------------------------------------
// One event's inclusion

export interface InclusionReport {
  ok: boolean;
  position: string;
  leaf_index: number | null;
  tree_size: number;
  /** Leaf hash, base64. */
  leaf_hash: string | null;
  audit_path: string[];
  event: { stream_id: string; stream_version: number; event_type: string; event_id: string } | null;
  problems: { kind: string; detail: string }[];
}

/**
 * Proves that the event at a log position is leaf `leaf_index` of the tree a kept head
 * signs: the head's signature, the event's stored hash recomputed from its content and its
 * stream's chain, and the audit path from the stored tree to the head's root.
 */
export async function proveInclusion(db: Kysely<Database>, position: string, head: TreeHead, publicKey: KeyObject): Promise<InclusionReport> {
  const report: InclusionReport = { ok: true, position, leaf_index: null, tree_size: head.treeSize, leaf_hash: null, audit_path: [], event: null, problems: [] };
  const problem = (kind: string, detail: string) => {
    report.ok = false;
    report.problems.push({ kind, detail });
  };
  if (!verifyTreeHead(publicKey, head)) problem('head_signature_invalid', `the kept head of tree size ${head.treeSize}: its signature is not the log key's over its fields — forged or altered`);
  const row = await db.selectFrom('events').selectAll().where('global_position', '=', position).executeTakeFirst();
  if (!row) {
    problem('event_missing', `no event at position ${position}`);
    return report;
  }
  report.event = { stream_id: row.stream_id, stream_version: row.stream_version, event_type: row.event_type, event_id: row.event_id };
  // The stored hash is the leaf's data: it must still be the hash of the event's content and its stream's chain.
  const chain = await db.selectFrom('events').selectAll().where('stream_id', '=', row.stream_id).where('stream_version', '<=', row.stream_version).orderBy('stream_version').execute();
  let previous = GENESIS_HASH;
  for (const [i, link] of chain.entries()) {
    const recomputed = eventHash(previous, leafFieldsOfRow(link));
    if (link.stream_version !== i + 1 || recomputed !== link.hash) {
      problem('hash_mismatch', `${row.stream_id} version ${link.stream_version}: its stream's chain does not give its stored hash — the event or one before it in its stream was altered, removed or reordered`);
      break;
    }
    previous = link.hash;
  }
  const leaf = await leafAtPosition(db, position);
  if (!leaf) {
    problem('not_in_tree', `the event at position ${position} is not a leaf of the log tree (not sealed yet, or the tree was altered)`);
    return report;
  }
  report.leaf_index = leaf.leafIndex;
  const data = leafOfEventHash(row.hash);
  report.leaf_hash = b64(data);
  if (!data.equals(leaf.leafHash)) problem('tree_mismatch', `the stored leaf ${leaf.leafIndex} is not the event at position ${position} as stored`);
  if (leaf.leafIndex >= head.treeSize) {
    problem('not_in_head', `the event is leaf ${leaf.leafIndex}, after the kept head's ${head.treeSize} leaves: keep a newer head`);
    return report;
  }
  try {
    const path = await inclusionProof(db, leaf.leafIndex, head.treeSize);
    report.audit_path = path.map(b64);
    if (!verifyInclusion(data, leaf.leafIndex, head.treeSize, path, head.rootHash)) {
      problem('inclusion_failed', `the event at position ${position} (leaf ${leaf.leafIndex}) is not proven in the kept head of ${head.treeSize}: the event, or the log before the head, was rewritten`);
    }
  } catch (error) {
    problem('inclusion_failed', `no audit path for leaf ${leaf.leafIndex} in a tree of ${head.treeSize}: ${(error as Error).message}`);
  }
  return report;
}
