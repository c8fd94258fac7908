/**
 * `forgelog events import` speed (issue 25 §2; bench/README.md, "Import and verify"): writes a
 * synthetic bundle of BENCH_IMPORT_EVENTS (1,000,000) events — streams of 10 UserStatusSet
 * events, two events per transaction, sealed in ranges of 1,000, one signed head over the
 * sealed events — then imports it into a database of its own with every check on (chains,
 * feed index columns, seals, the tree, the head's signature, the end counts), as
 * `forgelog events import --public-key` does. The verify phase (verify.ts) then runs over
 * the imported log. Target ≥ 100,000 events/s.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import { sql } from 'kysely';
import { importBundleFile } from '../src/cli/bundle.js';
import { feedIndexOf, installEventTypes } from '../src/commands/kernel/aggregates.js';
import type { Db } from '../src/database/database.js';
import { BUNDLE_FORMAT, BUNDLE_VERSION } from '../src/eventstore/export.js';
import { GENESIS_HASH, eventDigests } from '../src/eventstore/hash.js';
import { leafOfEventHash } from '../src/eventstore/log-tree.js';
import { TreeBuilder } from '../src/eventstore/merkle-tree.js';
import { FIRST_NORMAL_XID, advanceTransactionIds } from '../src/eventstore/rebase.js';
import { MerkleBuilder, sealHash } from '../src/eventstore/seal.js';
import { signTreeHead, treeHeadJson } from '../src/eventstore/tree-heads.js';
import { cpuTicks, log, round, toCores, type CpuSplit } from './harness/meters.js';
import type { Row } from './harness/table.js';

const num = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number(v));
export const IMPORT_EVENTS = num(process.env.BENCH_IMPORT_EVENTS, 1_000_000);
export const EVENTS_PER_SECOND_TARGET = 100_000;
const PER_STREAM = 10;
const PER_TRANSACTION = 2;
const PER_SEAL = 1000;

export interface ImportFigures {
  events: number;
  bytes: number;
  writeSeconds: number;
  /** Transaction ids consumed before the timing so the bundle's are kept (a young cluster). */
  advanced: number;
  seconds: number;
  eventsPerSecond: number;
  cores: CpuSplit;
  seals: number;
  headsChecked: number;
  transactionIdsKept: boolean;
}

/**
 * The bundle file: lines as `events export --bundle` writes them, every hash, seal and head
 * computed here as the sealer would have. Transaction ids run from 3 (FIRST_NORMAL_XID). One
 * pass: the event lines go to a file of their own while the seals and the head (which come
 * before them in a bundle) are computed, then the bundle is put together.
 */
export async function writeBundle(file: string, events: number, privateKey: KeyObject): Promise<{ maxTransactionId: bigint }> {
  installEventTypes();
  const eventsFile = `${file}.events`;
  const out = createWriteStream(eventsFile, { highWaterMark: 1 << 20 });
  const write = (line: string) => (out.write(`${line}\n`) ? undefined : new Promise<void>((r) => out.once('drain', () => r())));
  const transactions = Math.ceil(events / PER_TRANSACTION);
  const maxTransactionId = FIRST_NORMAL_XID + BigInt(transactions - 1);
  const sealed = Math.floor(events / PER_SEAL) * PER_SEAL;
  const occurredAt = new Date('2026-01-01T00:00:00.000Z');
  const occurred = occurredAt.toISOString();
  const seals: string[] = [];
  const tree = new TreeBuilder();
  let headRoot = tree.root();
  let builder = new MerkleBuilder();
  let first: { tx: string; pos: string } | undefined;
  let previousSeal = GENESIS_HASH;
  let previous = GENESIS_HASH;
  for (let i = 0; i < events; i++) {
    const stream = Math.floor(i / PER_STREAM) + 1;
    const version = (i % PER_STREAM) + 1;
    const data = { id: stream, emoji: 'coffee', message: `status ${i}`, message_html: `status ${i}` };
    const metadata = { actor_id: stream, actor_username: `user${stream}`, ip: '127.0.0.1', request_id: `r${i}` };
    const fields = { streamId: `user-${stream}`, streamVersion: version, eventId: `00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`, type: 'UserStatusSet', schemaVersion: 1, data, metadata, occurredAt };
    const { hash, content } = eventDigests(version === 1 ? GENESIS_HASH : previous, fields);
    previous = hash;
    const position = String(i + 1);
    const tx = String(FIRST_NORMAL_XID + BigInt(Math.floor(i / PER_TRANSACTION)));
    const line = write(
      JSON.stringify({
        global_position: position,
        transaction_id: tx,
        stream_id: fields.streamId,
        stream_version: version,
        event_id: fields.eventId,
        event_type: fields.type,
        schema_version: 1,
        data,
        metadata,
        ...feedIndexOf(fields.type, data, metadata),
        occurred_at: occurred,
        hash,
      }),
    );
    if (line) await line;
    if (i >= sealed) continue;
    first ??= { tx, pos: position };
    builder.add({ ...fields, globalPosition: position, hash }, content);
    tree.push(leafOfEventHash(hash));
    if (builder.count === PER_SEAL) {
      const seal = { first_transaction_id: first.tx, first_position: first.pos, last_transaction_id: tx, last_position: position, event_count: builder.count, merkle_root: builder.root(), previous_seal_hash: previousSeal };
      previousSeal = sealHash(seal);
      seals.push(JSON.stringify({ record: 'seal', id: seals.length + 1, ...seal, seal_hash: previousSeal, created_at: occurred }));
      builder = new MerkleBuilder();
      first = undefined;
    }
    if (tree.size === sealed) headRoot = tree.root();
  }
  out.end();
  await finished(out);
  const bundle = createWriteStream(file, { highWaterMark: 1 << 20 });
  bundle.write(`${JSON.stringify({ record: 'bundle', format: BUNDLE_FORMAT, version: BUNDLE_VERSION, exported_at: occurred, transactions, max_transaction_id: String(maxTransactionId) })}\n`);
  bundle.write(`${JSON.stringify({ record: 'tree_head', ...treeHeadJson(signTreeHead(privateKey, sealed, Date.now(), headRoot)) })}\n`);
  for (const seal of seals) bundle.write(`${seal}\n`);
  await pipeline(createReadStream(eventsFile), bundle, { end: false });
  bundle.end(`${JSON.stringify({ record: 'end', events, uploads: 0, git_objects: 0, tree_heads: 1, seals: seals.length, sequences: 0, claims: 0 })}\n`);
  await finished(bundle);
  rmSync(eventsFile);
  return { maxTransactionId };
}

/** Writes the bundle, imports it into `db` (new and migrated), and leaves the imported log there for the verify phase. */
export async function measureImport(db: Db): Promise<ImportFigures & { publicKey: KeyObject }> {
  const dir = mkdtempSync(join(tmpdir(), 'forgelog-import-bench-'));
  try {
    const file = join(dir, 'bundle.ndjson');
    const { privateKey } = generateKeyPairSync('ed25519');
    log(`import: writing a bundle of ${IMPORT_EVENTS} events…`);
    let started = performance.now();
    const { maxTransactionId } = await writeBundle(file, IMPORT_EVENTS, privateKey);
    const writeSeconds = (performance.now() - started) / 1000;
    // A bundle of a cluster that has run more transactions than this one makes the import
    // consume ids first (docs/operations.md); that one-off is kept out of the timing.
    const { rows } = await sql<{ next: string }>`select pg_snapshot_xmax(pg_current_snapshot())::text as next`.execute(db);
    const advanced = Math.max(0, Number(maxTransactionId - BigInt(rows[0]!.next)) + 100);
    if (advanced > 0) {
      log(`import: consuming ${advanced} transaction ids so the bundle's are kept…`);
      await advanceTransactionIds(db, advanced);
    }
    const bytes = statSync(file).size;
    log(`import: bundle written in ${round(writeSeconds, 1)} s (${round(bytes / 2 ** 20)} MiB); importing…`);
    const publicKey = createPublicKey(privateKey);
    const cpu = cpuTicks(undefined);
    started = performance.now();
    const report = await importBundleFile(db, file, { publicKey });
    const seconds = (performance.now() - started) / 1000;
    const cores = toCores(cpu());
    log(`import: ${report.counts.events} events in ${round(seconds, 1)} s`);
    return {
      events: report.counts.events,
      bytes,
      writeSeconds,
      advanced,
      seconds,
      eventsPerSecond: Math.round(report.counts.events / seconds),
      cores,
      seals: report.counts.seals,
      headsChecked: report.headsChecked,
      transactionIdsKept: report.transactionIdsKept,
      publicKey,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const importMissed = (f: ImportFigures): string[] =>
  f.eventsPerSecond >= EVENTS_PER_SECOND_TARGET ? [] : [`events import: ${f.eventsPerSecond} events/s over ${f.events} events, target ≥ ${EVENTS_PER_SECOND_TARGET}`];

/** A throughput row of the import phase (import, verify): events/s beside the target, then what was measured. */
export function throughputRow(what: string, f: { eventsPerSecond: number; seconds: number; cores: CpuSplit }, notes = ''): Row {
  const met = f.eventsPerSecond >= EVENTS_PER_SECOND_TARGET;
  return [
    what,
    `${f.eventsPerSecond}/s`,
    '',
    '',
    '',
    '',
    `≥ ${EVENTS_PER_SECOND_TARGET}/s: ${met ? 'ok' : 'NOT MET'}`,
    `${round(f.seconds, 1)} s; cpu node/pg/other ${f.cores.server}/${f.cores.postgres}/${f.cores.other}${notes}`,
  ];
}

export const importRow = (f: ImportFigures): Row =>
  throughputRow(`events import, ${f.events} events (${round(f.bytes / 2 ** 20)} MiB, ${f.seals} seals, ${f.headsChecked} head)`, f, `; bundle written in ${round(f.writeSeconds, 1)} s`);

export const importJson = (f: ImportFigures) => ({ ...f, seconds: round(f.seconds, 2), writeSeconds: round(f.writeSeconds, 1), targets: { eventsPerSecond: EVENTS_PER_SECOND_TARGET } });
