import { createHash } from 'node:crypto';
import { sha256 } from './hash.js';

/**
 * RFC 6962 / RFC 9162 Merkle tree math, pure: the hashes, the tree's shape for any size,
 * the ranges whose hashes make up inclusion and consistency proofs, and the verification of
 * both proofs (RFC 9162 §2.1.3.2 and §2.1.4.2).
 *
 * A tree over leaves D[0..n) is MTH(D[0:n]) with the split at the largest power of two
 * below n (RFC 6962 §2.1). Every subtree the proofs name is a range [start, end) whose
 * start is a multiple of a power of two at least its size; such a range is the
 * concatenation of perfect, aligned subtrees ("nodes": level l, index i covers leaves
 * [i·2^l, (i+1)·2^l)), one per bit of its size from the highest, and its hash is those
 * nodes' hashes folded from the right. So a store that keeps every complete perfect node
 * answers any proof with O(log n) lookups (log-tree.ts).
 */

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

/** SHA-256 of nothing: the root of the empty tree. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

/** Where a node's or a 32-byte leaf's input is put together (hashing is synchronous): no Buffer.concat per hash. */
const input = Buffer.alloc(65);

export function leafHash(data: Uint8Array): Buffer {
  if (data.length !== 32) return sha256(Buffer.concat([LEAF_PREFIX, data]));
  input[0] = 0;
  input.set(data, 1);
  return sha256(input.subarray(0, 33));
}

/** leafHash of the 32 bytes a 64-digit hex string gives (an event's stored hash): the bytes of leafHash(Buffer.from(hex, 'hex')). */
export function leafHashOfHex(hex: string): Buffer {
  input[0] = 0;
  if (hex.length !== 64 || input.write(hex, 1, 'hex') !== 32) return leafHash(Buffer.from(hex, 'hex'));
  return sha256(input.subarray(0, 33));
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== 32 || right.length !== 32) return sha256(Buffer.concat([NODE_PREFIX, left, right]));
  input[0] = 1;
  input.set(left, 1);
  input.set(right, 33);
  return sha256(input);
}

/** A perfect subtree: leaves [index·2^level, (index+1)·2^level). Level 0 is a leaf. */
export interface NodeKey {
  readonly level: number;
  readonly index: number;
}

/** Leaves [start, end). */
export interface Range {
  readonly start: number;
  readonly end: number;
}

/** The largest power of two strictly below n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The perfect nodes a range is made of, left to right (the range must be one of RFC 6962's subtrees, or start at 0). */
export function perfectNodes(range: Range): NodeKey[] {
  const nodes: NodeKey[] = [];
  let start = range.start;
  let size = range.end - range.start;
  for (let level = 52; level >= 0 && size > 0; level--) {
    const width = 2 ** level;
    if (size < width) continue;
    if (start % width !== 0) throw new RangeError(`range [${range.start}, ${range.end}) is not a subtree of an RFC 6962 tree`);
    nodes.push({ level, index: start / width });
    start += width;
    size -= width;
  }
  return nodes;
}

/** MTH of a range, from its perfect nodes' hashes (`get` answers each of `perfectNodes(range)`). */
export function rangeHash(range: Range, get: (node: NodeKey) => Uint8Array): Buffer {
  const nodes = perfectNodes(range);
  if (nodes.length === 0) return EMPTY_ROOT;
  let hash: Buffer = Buffer.from(get(nodes[nodes.length - 1]!));
  for (let i = nodes.length - 2; i >= 0; i--) hash = nodeHash(get(nodes[i]!), hash);
  return hash;
}

/**
 * The ranges whose hashes are the audit path of leaf m in a tree of n leaves, in RFC 6962
 * §2.1.1's order (PATH(m, D[n]): the leaf's sibling first, the root's child last).
 */
export function inclusionRanges(m: number, n: number): Range[] {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(n) && m >= 0 && m < n)) throw new RangeError(`no leaf ${m} in a tree of ${n}`);
  const path: Range[] = [];
  const walk = (m: number, start: number, end: number) => {
    if (end - start <= 1) return;
    const k = splitPoint(end - start);
    if (m < k) {
      walk(m, start, start + k);
      path.push({ start: start + k, end });
    } else {
      walk(m - k, start + k, end);
      path.push({ start, end: start + k });
    }
  };
  walk(m, 0, n);
  return path;
}

/**
 * The ranges whose hashes prove that the tree of m leaves is a prefix of the tree of n
 * (RFC 6962 §2.1.2, PROOF(m, D[n])), in its order. Empty when m is 0 or m = n.
 */
export function consistencyRanges(m: number, n: number): Range[] {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(n) && m >= 0 && m <= n)) throw new RangeError(`no consistency proof from ${m} to ${n}`);
  if (m === 0 || m === n) return [];
  const proof: Range[] = [];
  const subproof = (m: number, start: number, end: number, whole: boolean) => {
    const size = end - start;
    if (m === size) {
      if (!whole) proof.push({ start, end });
      return;
    }
    const k = splitPoint(size);
    if (m <= k) {
      subproof(m, start, start + k, whole);
      proof.push({ start: start + k, end });
    } else {
      subproof(m - k, start + k, end, false);
      proof.push({ start, end: start + k });
    }
  };
  subproof(m, 0, n, true);
  return proof;
}

const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(a, b) === 0;
/**
 * Every hash a proof names is SHA-256's 32 bytes: a node hashes the concatenation of its
 * children, so a "hash" of another length could carry part of its neighbour (a ‖ b cut
 * elsewhere) and prove what is not in the tree.
 */
const HASH_BYTES = 32;
const hashes = (...values: readonly Uint8Array[]) => values.every((v) => v.length === HASH_BYTES);

/** RFC 9162 §2.1.3.2: does `path` prove the leaf hash at `index` in the tree of `size` leaves with `root`? */
export function verifyInclusion(leaf: Uint8Array, index: number, size: number, path: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size)) || index < 0 || index >= size) return false;
  if (!hashes(leaf, root, ...path)) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r: Buffer = Buffer.from(leaf);
  for (const p of path) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && equal(r, root);
}

/**
 * RFC 9162 §2.1.4.2: does `proof` show that the tree of `size1` leaves with `root1` is a
 * prefix of the tree of `size2` with `root2`? Equal sizes need an empty proof and equal
 * roots; the empty tree (whose root is EMPTY_ROOT, and no other) is a prefix of every tree,
 * with nothing to prove.
 */
export function verifyConsistency(size1: number, size2: number, proof: readonly Uint8Array[], root1: Uint8Array, root2: Uint8Array): boolean {
  if (!(Number.isSafeInteger(size1) && Number.isSafeInteger(size2)) || size1 < 0 || size2 < size1) return false;
  if (!hashes(root1, root2, ...proof)) return false;
  if (size1 === 0 && !equal(root1, EMPTY_ROOT)) return false;
  if (size1 === size2) return proof.length === 0 && equal(root1, root2);
  if (size1 === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = (size1 & (size1 - 1)) === 0 ? [root1, ...proof] : [...proof];
  let fn = BigInt(size1 - 1);
  let sn = BigInt(size2 - 1);
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr: Buffer = Buffer.from(path[0]!);
  let sr: Buffer = Buffer.from(path[0]!);
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return equal(fr, root1) && equal(sr, root2) && sn === 0n;
}

/** A perfect node and its hash, as TreeBuilder completes it. */
export interface StoredNode extends NodeKey {
  readonly hash: Buffer;
}

/**
 * Appends leaves one at a time to a tree that already holds `size` leaves (whose peaks —
 * the perfect nodes of `perfectNodes({ start: 0, end: size })` — are given), and reports
 * every perfect node each append completes: O(1) hashes per leaf amortised, O(log n) memory.
 */
export class TreeBuilder {
  private readonly peaks: StoredNode[];

  constructor(
    public size = 0,
    peaks: readonly StoredNode[] = [],
  ) {
    const expected = perfectNodes({ start: 0, end: size });
    if (expected.length !== peaks.length || expected.some((node, i) => node.level !== peaks[i]!.level || node.index !== peaks[i]!.index)) {
      throw new Error(`the peaks given are not those of a tree of ${size} leaves`);
    }
    this.peaks = [...peaks];
  }

  /** Appends a leaf hash; answers the nodes it completed, the leaf (level 0) first. */
  push(leaf: Buffer): StoredNode[] {
    const made: StoredNode[] = [];
    let node: StoredNode = { level: 0, index: this.size, hash: leaf };
    made.push(node);
    for (let top = this.peaks.at(-1); top && top.level === node.level; top = this.peaks.at(-1)) {
      this.peaks.pop();
      node = { level: node.level + 1, index: top.index / 2, hash: nodeHash(top.hash, node.hash) };
      made.push(node);
    }
    this.peaks.push(node);
    this.size += 1;
    return made;
  }

  /** The perfect nodes the tree is made of, left to right. */
  currentPeaks(): readonly StoredNode[] {
    return this.peaks;
  }

  root(): Buffer {
    if (this.peaks.length === 0) return EMPTY_ROOT;
    let hash = this.peaks[this.peaks.length - 1]!.hash;
    for (let i = this.peaks.length - 2; i >= 0; i--) hash = nodeHash(this.peaks[i]!.hash, hash);
    return hash;
  }
}
