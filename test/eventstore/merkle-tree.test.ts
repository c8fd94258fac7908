import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_ROOT,
  TreeBuilder,
  consistencyRanges,
  inclusionRanges,
  leafHash,
  nodeHash,
  perfectNodes,
  rangeHash,
  verifyConsistency,
  verifyInclusion,
  type NodeKey,
  type StoredNode,
} from '../../src/eventstore/merkle-tree.js';

// RFC 6962 §2.1 written out naively over the whole leaf list: MTH, PATH and PROOF by their
// recursive definitions. The module under test answers from perfect nodes instead.

const leafData = (i: number) => createHash('sha256').update(`event ${i}`).digest();
const LEAVES = Array.from({ length: 5000 }, (_, i) => leafHash(leafData(i)));

const k = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

const memo = new Map<string, Buffer>();
function mth(d: readonly Buffer[], start: number, end: number): Buffer {
  const key = `${start}:${end}`;
  const known = memo.get(key);
  if (known) return known;
  let hash: Buffer;
  if (end === start) hash = createHash('sha256').digest();
  else if (end - start === 1) hash = d[start]!;
  else {
    const split = k(end - start);
    hash = createHash('sha256').update(Buffer.from([1])).update(mth(d, start, start + split)).update(mth(d, start + split, end)).digest();
  }
  memo.set(key, hash);
  return hash;
}

function path(m: number, start: number, end: number): Buffer[] {
  if (end - start <= 1) return [];
  const split = k(end - start);
  return m < split ? [...path(m, start, start + split), mth(LEAVES, start + split, end)] : [...path(m - split, start + split, end), mth(LEAVES, start, start + split)];
}

function subproof(m: number, start: number, end: number, b: boolean): Buffer[] {
  const n = end - start;
  if (m === n) return b ? [] : [mth(LEAVES, start, end)];
  const split = k(n);
  return m <= split
    ? [...subproof(m, start, start + split, b), mth(LEAVES, start + split, end)]
    : [...subproof(m - split, start + split, end, false), mth(LEAVES, start, start + split)];
}
const proof = (m: number, n: number) => (m === 0 || m === n ? [] : subproof(m, 0, n, true));

/** Every perfect node of the 5,000-leaf tree, as the builder completes them. */
const NODES = new Map<string, Buffer>();
const builder = new TreeBuilder();
for (const leaf of LEAVES) for (const node of builder.push(leaf)) NODES.set(`${node.level}/${node.index}`, node.hash);
const get = (node: NodeKey) => {
  const hash = NODES.get(`${node.level}/${node.index}`);
  if (!hash) throw new Error(`node ${node.level}/${node.index} not stored`);
  return hash;
};
const roots = new Map<number, Buffer>();
const root = (n: number) => roots.get(n) ?? roots.set(n, rangeHash({ start: 0, end: n }, get)).get(n)!;
const inclusion = (m: number, n: number) => inclusionRanges(m, n).map((r) => rangeHash(r, get));
const consistency = (m: number, n: number) => consistencyRanges(m, n).map((r) => rangeHash(r, get));

const hex = (hashes: readonly Buffer[]) => hashes.map((h) => h.toString('hex'));
const sameHashes = (a: readonly Buffer[], b: readonly Buffer[]) => a.length === b.length && a.every((h, i) => h.equals(b[i]!));

describe('RFC 6962 tree math against the naive full-tree computation', () => {
  it('hashes leaves and nodes with their prefixes; the empty tree is SHA-256 of nothing', () => {
    const data = Buffer.from('x');
    expect(leafHash(data)).toEqual(createHash('sha256').update(Buffer.concat([Buffer.from([0]), data])).digest());
    expect(nodeHash(data, data)).toEqual(createHash('sha256').update(Buffer.concat([Buffer.from([1]), data, data])).digest());
    expect(EMPTY_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(root(0)).toEqual(EMPTY_ROOT);
  });

  it('gives every size 1..200 the root of MTH, built leaf by leaf or from the stored nodes', () => {
    const incremental = new TreeBuilder();
    for (let n = 1; n <= 200; n++) {
      incremental.push(LEAVES[n - 1]!);
      expect(incremental.root(), `n = ${n}`).toEqual(mth(LEAVES, 0, n));
      expect(root(n), `n = ${n}`).toEqual(mth(LEAVES, 0, n));
    }
  });

  // Some 20,000 pairs each: every pair is compared, and the pairs that fail are listed in one
  // assertion (an expect per pair costs more than the hashing).
  it('gives every leaf of every size 1..200 the audit path PATH(m, D[n]), which verifies', () => {
    const wrong: string[] = [];
    for (let n = 1; n <= 200; n++) {
      for (let m = 0; m < n; m++) {
        const audit = inclusion(m, n);
        if (!sameHashes(audit, path(m, 0, n))) wrong.push(`PATH(${m}, D[${n}]) differs`);
        if (!verifyInclusion(LEAVES[m]!, m, n, audit, root(n))) wrong.push(`PATH(${m}, D[${n}]) does not verify`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('gives every pair of sizes m ≤ n ≤ 200 the consistency proof PROOF(m, D[n]), which verifies', () => {
    const wrong: string[] = [];
    for (let n = 1; n <= 200; n++) {
      for (let m = 0; m <= n; m++) {
        const found = consistency(m, n);
        if (!sameHashes(found, proof(m, n))) wrong.push(`PROOF(${m}, D[${n}]) differs`);
        if (!verifyConsistency(m, n, found, root(m), root(n))) wrong.push(`PROOF(${m}, D[${n}]) does not verify`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('agrees on random pairs up to 5,000 leaves, and rejects any altered, shortened or lengthened proof, root or leaf', () => {
    const pair = fc.integer({ min: 1, max: 5000 }).chain((n) => fc.tuple(fc.integer({ min: 1, max: n }), fc.constant(n)));
    fc.assert(
      fc.property(pair, fc.nat(), fc.nat(), ([m, n], which, bit) => {
        const found = consistency(m, n);
        expect(hex(found)).toEqual(hex(proof(m, n)));
        expect(verifyConsistency(m, n, found, root(m), root(n))).toBe(true);
        const flip = (hash: Buffer) => {
          const copy = Buffer.from(hash);
          copy[bit % 32]! ^= 1 << (bit % 8);
          return copy;
        };
        if (m < n) {
          const altered = found.map((h, i) => (i === which % found.length ? flip(h) : h));
          expect(verifyConsistency(m, n, altered, root(m), root(n))).toBe(false);
          expect(verifyConsistency(m, n, found, flip(root(m)), root(n))).toBe(false);
          expect(verifyConsistency(m, n, found, root(m), flip(root(n)))).toBe(false);
          expect(verifyConsistency(m, n, found.slice(0, -1), root(m), root(n))).toBe(false);
          expect(verifyConsistency(m, n, [...found, found[0]!], root(m), root(n))).toBe(false);
        }
        const leaf = which % n;
        const audit = inclusion(leaf, n);
        expect(hex(audit)).toEqual(hex(path(leaf, 0, n)));
        expect(verifyInclusion(LEAVES[leaf]!, leaf, n, audit, root(n))).toBe(true);
        expect(verifyInclusion(flip(LEAVES[leaf]!), leaf, n, audit, root(n))).toBe(false);
        if (n > 1) {
          expect(verifyInclusion(LEAVES[leaf]!, (leaf + 1) % n, n, audit, root(n))).toBe(false);
          expect(verifyInclusion(LEAVES[leaf]!, leaf, n, audit.map((h, i) => (i === bit % audit.length ? flip(h) : h)), root(n))).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('rejects hashes that are not 32 bytes, and a size-0 head whose root is not the empty tree\'s', () => {
    const [a, b] = [LEAVES[0]!, LEAVES[1]!];
    expect(nodeHash(a, b)).toEqual(root(2));
    // a ‖ b cut elsewhere: a 48-byte "leaf" and a 16-byte path element hash to the root as a ‖ b do.
    expect(verifyInclusion(Buffer.concat([a.subarray(16), b]), 1, 2, [a.subarray(0, 16)], root(2))).toBe(false);
    expect(verifyInclusion(b, 1, 2, [a], Buffer.concat([root(2), Buffer.alloc(1)]))).toBe(false);
    // A 37-byte "root" of the tree of 1 and a 27-byte proof element: root1 ‖ c is a ‖ b.
    expect(verifyConsistency(1, 2, [b.subarray(5)], Buffer.concat([a, b.subarray(0, 5)]), root(2))).toBe(false);
    expect(verifyConsistency(2, 3, [Buffer.concat([LEAVES[2]!, Buffer.alloc(1)])], root(2), root(3))).toBe(false);
    expect(verifyConsistency(3, 3, [], Buffer.from('x'), Buffer.from('x'))).toBe(false);
    // The tree of no leaves has one root: SHA-256 of nothing.
    expect(verifyConsistency(0, 5, [], EMPTY_ROOT, root(5))).toBe(true);
    expect(verifyConsistency(0, 5, [], root(1), root(5))).toBe(false);
    expect(verifyConsistency(0, 0, [], root(1), root(1))).toBe(false);
    expect(verifyConsistency(0, 0, [], EMPTY_ROOT, EMPTY_ROOT)).toBe(true);
    // Sizes that are not whole numbers, or a leaf outside the tree.
    expect(verifyInclusion(a, 0, 1.5, [], a)).toBe(false);
    expect(verifyInclusion(a, 1, 1, [], a)).toBe(false);
    expect(verifyConsistency(1, 2.5, [b], a, root(2))).toBe(false);
  });

  it('keeps proofs logarithmic: at most 2·log2(n) + 2 perfect nodes per proof', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }).chain((n) => fc.tuple(fc.integer({ min: 1, max: n }), fc.constant(n))), ([m, n]) => {
        const bound = 2 * Math.ceil(Math.log2(n + 1)) + 2;
        const nodes = new Set(consistencyRanges(m, n).flatMap((r) => perfectNodes(r)).map((p) => `${p.level}/${p.index}`));
        expect(nodes.size).toBeLessThanOrEqual(bound);
        const leafNodes = new Set(inclusionRanges(m - 1, n).flatMap((r) => perfectNodes(r)).map((p) => `${p.level}/${p.index}`));
        expect(leafNodes.size).toBeLessThanOrEqual(bound);
      }),
    );
  });

  it('resumes from a tree of any size given its peaks, completing the same nodes', () => {
    const fresh = new TreeBuilder();
    const all: StoredNode[] = [];
    for (const leaf of LEAVES.slice(0, 300)) all.push(...fresh.push(leaf));
    for (const size of [0, 1, 2, 3, 7, 8, 100, 255, 256, 299]) {
      const resumed = new TreeBuilder(size, perfectNodes({ start: 0, end: size }).map((p) => ({ ...p, hash: get(p) })));
      const made: StoredNode[] = [];
      for (const leaf of LEAVES.slice(size, 300)) made.push(...resumed.push(leaf));
      expect(resumed.root()).toEqual(fresh.root());
      expect(made.map((n) => `${n.level}/${n.index}`)).toEqual(all.filter((n) => (n.index + 1) * 2 ** n.level > size).map((n) => `${n.level}/${n.index}`));
    }
    expect(() => new TreeBuilder(3, [])).toThrow(/not those of a tree of 3 leaves/);
  });
});
