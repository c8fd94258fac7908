/**
 * The log tree (bench/README.md, "Log tree"; docs/log-evidence.md): consistency and inclusion proofs
 * over a tree of BENCH_LOG_TREE_LEAVES (1,000,000) leaves, read from the stored perfect
 * subtrees as GET /-/log/proof/* reads them. The tree is seeded in SQL, level by level (the
 * leaves' data stand for events' stored hashes), in a database of its own: proofs read only
 * the tree's tables, so no event needs to exist. Target: a consistency proof in under 10 ms (p90).
 */
import { sql } from 'kysely';
import { openDatabase } from '../src/database/database.js';
import { migrateToLatest } from '../src/database/migrate.js';
import { consistencyProof, inclusionProof, rootAt } from '../src/eventstore/log-tree.js';
import { verifyConsistency, verifyInclusion } from '../src/eventstore/merkle-tree.js';
import { log, percentile, round } from './harness/meters.js';
import { createDatabase, type Cleanups } from './harness/setup.js';
import type { Row } from './harness/table.js';

const num = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number(v));
export const LOG_TREE_LEAVES = num(process.env.BENCH_LOG_TREE_LEAVES, 1_000_000);
const PROOFS = 300;
const P90_TARGET_MS = 10;

export interface LogTreeFigures {
  leaves: number;
  seedSeconds: number;
  proofs: { name: string; count: number; p50: number; p90: number; p99: number; max: number; hashes: number }[];
}

export async function measureLogTree(database: string, cleanups: Cleanups): Promise<LogTreeFigures> {
  const { url, drop } = await createDatabase(database, cleanups);
  const handle = await openDatabase({ databaseUrl: url, poolSize: 2 });
  try {
    await migrateToLatest(handle.db);
    const n = LOG_TREE_LEAVES;
    log(`log tree: seeding ${n} leaves and their perfect subtrees in SQL…`);
    const started = performance.now();
    await sql`insert into log_tree_leaves (leaf_index, global_position, leaf_hash)
              select i, i + 1, sha256('\\x00'::bytea || sha256(int8send(i))) from generate_series(0, ${n - 1}::bigint) i`.execute(handle.db);
    await sql`insert into log_tree_nodes (level, node_index, hash)
              select 1, l.leaf_index / 2, sha256('\\x01'::bytea || l.leaf_hash || r.leaf_hash)
                from log_tree_leaves l join log_tree_leaves r on r.leaf_index = l.leaf_index + 1 where l.leaf_index % 2 = 0`.execute(handle.db);
    for (let level = 2; 2 ** level <= n; level++) {
      await sql`insert into log_tree_nodes (level, node_index, hash)
                select ${level}, l.node_index / 2, sha256('\\x01'::bytea || l.hash || r.hash)
                  from log_tree_nodes l join log_tree_nodes r on r.level = l.level and r.node_index = l.node_index + 1
                 where l.level = ${level - 1} and l.node_index % 2 = 0`.execute(handle.db);
    }
    await sql`analyze log_tree_leaves, log_tree_nodes`.execute(handle.db);
    const seedSeconds = (performance.now() - started) / 1000;
    log(`log tree: seeded in ${round(seedSeconds, 1)} s; ${PROOFS} proofs of each kind…`);

    const random = (below: number) => 1 + Math.floor(Math.random() * (below - 1));
    const rootN = await rootAt(handle.db, n);
    const consistency: number[] = [];
    const inclusion: number[] = [];
    let consistencyHashes = 0;
    let inclusionHashes = 0;
    for (let i = 0; i < PROOFS; i++) {
      const m = random(n);
      let t0 = performance.now();
      const proof = await consistencyProof(handle.db, m, n);
      consistency.push(performance.now() - t0);
      consistencyHashes = Math.max(consistencyHashes, proof.length);
      // Checked outside the timing: the proof holds between the two roots.
      if (!verifyConsistency(m, n, proof, await rootAt(handle.db, m), rootN)) throw new Error(`log tree bench: the consistency proof ${m} → ${n} does not verify`);
      const leaf = m - 1;
      t0 = performance.now();
      const path = await inclusionProof(handle.db, leaf, n);
      inclusion.push(performance.now() - t0);
      inclusionHashes = Math.max(inclusionHashes, path.length);
      const { rows } = await sql<{ leaf_hash: Buffer }>`select leaf_hash from log_tree_leaves where leaf_index = ${leaf}`.execute(handle.db);
      if (!verifyInclusion(Buffer.from(rows[0]!.leaf_hash), leaf, n, path, rootN)) throw new Error(`log tree bench: the audit path of leaf ${leaf} does not verify`);
    }
    const figure = (name: string, times: number[], hashes: number) => {
      const sorted = [...times].sort((a, b) => a - b);
      return { name, count: sorted.length, p50: round(percentile(sorted, 50), 2), p90: round(percentile(sorted, 90), 2), p99: round(percentile(sorted, 99), 2), max: round(sorted.at(-1)!, 2), hashes };
    };
    return { leaves: n, seedSeconds, proofs: [figure('consistency proof (m random → n)', consistency, consistencyHashes), figure('inclusion proof (random leaf, tree n)', inclusion, inclusionHashes)] };
  } finally {
    await handle.close();
    await drop();
  }
}

export const logTreeMissed = (f: LogTreeFigures): string[] =>
  f.proofs[0]!.p90 < P90_TARGET_MS ? [] : [`log tree: a consistency proof over ${f.leaves} leaves took ${f.proofs[0]!.p90} ms (p90), target < ${P90_TARGET_MS} ms`];

export function logTreeRows(f: LogTreeFigures): Row[] {
  return [
    `Log tree — proofs from the stored perfect subtrees of a tree of ${f.leaves} leaves (seeded in SQL in ${round(f.seedSeconds, 1)} s); 1 connection`,
    ...f.proofs.map((p, i) => [
      `${p.name}, ≤ ${p.hashes} hashes`,
      '',
      p.p50.toFixed(2),
      p.p90.toFixed(2),
      p.p99.toFixed(2),
      '',
      i === 0 ? `p90 < ${P90_TARGET_MS} ms: ${p.p90 < P90_TARGET_MS ? 'ok' : 'NOT MET'}` : '',
      `max ${p.max.toFixed(2)} ms`,
    ]),
  ];
}

export const logTreeJson = (f: LogTreeFigures) => ({ leaves: f.leaves, seedSeconds: round(f.seedSeconds, 1), proofs: f.proofs, targets: { consistencyP90Ms: P90_TARGET_MS } });
