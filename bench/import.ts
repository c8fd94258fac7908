/**
 * `forgelog events import` speed (issue 25 §2): writes a synthetic bundle of EVENTS events
 * (default 100,000; streams of 10 UserStatusSet events, two events per transaction, sealed
 * in ranges of 1,000 with one signed head), then imports it into the database DATABASE_URL
 * names (it must be new and migrated: `forgelog migrate`), or into a new embedded one, and
 * prints the events/s reached — every check on: chains, feed index columns (schemas),
 * seals, the tree and the head's signature.
 *
 *   EVENTS=100000 DATABASE_URL=postgres://…/empty_db npx tsx bench/import.ts
 */
import { createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { importBundleFile } from '../src/cli/bundle.js';
import { feedIndexOf, installEventTypes } from '../src/commands/kernel/aggregates.js';
import { openDatabase } from '../src/database/database.js';
import { migrateToLatest } from '../src/database/migrate.js';
import { BUNDLE_FORMAT, BUNDLE_VERSION } from '../src/eventstore/export.js';
import { GENESIS_HASH, eventHash } from '../src/eventstore/hash.js';
import { leafOfEventHash } from '../src/eventstore/log-tree.js';
import { TreeBuilder } from '../src/eventstore/merkle-tree.js';
import { MerkleBuilder, sealHash } from '../src/eventstore/seal.js';
import { signTreeHead, treeHeadJson } from '../src/eventstore/tree-heads.js';

const EVENTS = Number(process.env.EVENTS ?? 100_000);
const PER_STREAM = 10;
const PER_SEAL = 1000;

installEventTypes();
const dir = mkdtempSync(join(tmpdir(), 'forgelog-import-bench-'));
const file = join(dir, 'bundle.ndjson');
const { privateKey } = generateKeyPairSync('ed25519');

async function writeBundle() {
  const out = createWriteStream(file);
  const write = (value: unknown) => (out.write(`${JSON.stringify(value)}\n`) ? undefined : new Promise<void>((r) => out.once('drain', () => r())));
  const events: string[] = [];
  const seals: unknown[] = [];
  const tree = new TreeBuilder();
  let builder = new MerkleBuilder();
  let first: { tx: string; pos: string } | undefined;
  let previousSeal = GENESIS_HASH;
  const heads = new Map<number, string>();
  const occurredAt = new Date('2026-01-01T00:00:00.000Z');
  for (let i = 0; i < EVENTS; i++) {
    const position = String(i + 1);
    const tx = String(1000 + Math.floor(i / 2));
    const stream = Math.floor(i / PER_STREAM) + 1;
    const version = (i % PER_STREAM) + 1;
    const data = { id: stream, emoji: 'coffee', message: `status ${i}`, message_html: `status ${i}` };
    const metadata = { actor_id: stream, actor_username: `user${stream}`, ip: '127.0.0.1', request_id: `r${i}` };
    const fields = { streamId: `user-${stream}`, streamVersion: version, eventId: randomUUID(), type: 'UserStatusSet', schemaVersion: 1, data, metadata, occurredAt };
    const hash = eventHash(version === 1 ? GENESIS_HASH : heads.get(stream)!, fields);
    heads.set(stream, hash);
    if (version === PER_STREAM) heads.delete(stream);
    const columns = feedIndexOf('UserStatusSet', data, metadata)!;
    events.push(
      JSON.stringify({
        global_position: position,
        transaction_id: tx,
        stream_id: fields.streamId,
        stream_version: version,
        event_id: fields.eventId,
        event_type: 'UserStatusSet',
        schema_version: 1,
        data,
        metadata,
        ...columns,
        occurred_at: occurredAt.toISOString(),
        hash,
      }),
    );
    first ??= { tx, pos: position };
    builder.add({ ...fields, globalPosition: position, hash });
    tree.push(leafOfEventHash(hash));
    if (builder.count === PER_SEAL) {
      const seal = { first_transaction_id: first.tx, first_position: first.pos, last_transaction_id: tx, last_position: position, event_count: builder.count, merkle_root: builder.root(), previous_seal_hash: previousSeal };
      const hashed = sealHash(seal);
      seals.push({ record: 'seal', id: seals.length + 1, ...seal, seal_hash: hashed, created_at: occurredAt.toISOString() });
      previousSeal = hashed;
      builder = new MerkleBuilder();
      first = undefined;
    }
  }
  const sealed = seals.length * PER_SEAL;
  await write({ record: 'bundle', format: BUNDLE_FORMAT, version: BUNDLE_VERSION, exported_at: new Date().toISOString(), transactions: Math.ceil(EVENTS / 2), max_transaction_id: String(1000 + Math.floor((EVENTS - 1) / 2)) });
  // The head over the sealed events: the tree again up to there.
  const sealedTree = new TreeBuilder();
  for (let i = 0; i < sealed; i++) sealedTree.push(leafOfEventHash(JSON.parse(events[i]!).hash));
  await write({ record: 'tree_head', ...treeHeadJson(signTreeHead(privateKey, sealed, Date.now(), sealedTree.root())) });
  for (const seal of seals) await write(seal);
  for (const line of events) if (!out.write(`${line}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
  await write({ record: 'end', events: EVENTS, uploads: 0, git_objects: 0, tree_heads: 1, seals: seals.length, sequences: 0, claims: 0 });
  out.end();
  await finished(out);
}

await writeBundle();
const handle = await openDatabase(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : { dataDir: join(dir, 'data') });
try {
  await migrateToLatest(handle.db);
  const started = performance.now();
  const report = await importBundleFile(handle.db, file, { publicKey: createPublicKey(privateKey) });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    JSON.stringify({
      events: report.counts.events,
      bytes: statSync(file).size,
      seconds: Number(seconds.toFixed(2)),
      events_per_second: Math.round(report.counts.events / seconds),
      seals: report.counts.seals,
      heads_checked: report.headsChecked,
      transaction_ids_kept: report.transactionIdsKept,
      advanced: report.advanced,
    }),
  );
} finally {
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
}
