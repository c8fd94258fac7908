import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportBundleTo, importBundleFile } from '../../src/cli/bundle.js';
import { feedIndexOf } from '../../src/commands/kernel/aggregates.js';
import { REACTORS } from '../../src/commands/reactors.js';
import type { DatabaseHandle } from '../../src/database/database.js';
import { verifyExport } from '../../src/eventstore/export.js';
import { eventHash } from '../../src/eventstore/hash.js';
import { ImportRefused, ImportTargetNotEmpty, type ImportRefusal } from '../../src/eventstore/import.js';
import { sealPending } from '../../src/eventstore/seal.js';
import { publishTreeHead } from '../../src/eventstore/tree-heads.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { repositoryObjectsCheck } from '../../src/projections/repository/verify.js';
import { openTestDatabase } from '../support/database.js';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { waitUntilReadable } from './audit-support.js';

/**
 * Issue 25 §2: `forgelog events import` verifies a bundle line by line and writes all of it or
 * nothing. The source log is written through the API (users, an avatar, a project with
 * commits, an issue), sealed in several ranges with signed heads over them, and exported as a
 * bundle; each case imports the bundle as it is, or with one line changed, into a new
 * migrated database.
 */

const { privateKey: signingKey } = generateKeyPairSync('ed25519');
const publicKey = createPublicKey(signingKey);
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

let api: TestServer;
let dir: string;
let lines: string[];

async function seal() {
  await settled(api);
  await waitUntilReadable(api.handle.db);
  await sealPending(api.handle.db, { maxEventsPerSeal: 7 });
  await publishTreeHead(api.handle.db, signingKey);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'forgelog-import-'));
  api = await startTestServer();
  const form = new FormData();
  for (const [k, v] of Object.entries({ email: 'ava@example.com', username: 'ava', name: 'Ava', password: 'password123', skip_confirmation: 'true' })) form.append(k, v);
  form.append('avatar', new Blob([PNG], { type: 'image/png' }), 'ava.png');
  expect((await fetch(`${api.apiUrl}/users`, { method: 'POST', body: form, headers: { 'PRIVATE-TOKEN': api.rootToken } })).status).toBe(201);
  const project = await api.post('/projects', { name: 'imported', visibility: 'public' });
  expect(project.status).toBe(201);
  const id = project.body.id as number;
  await seal();
  for (const [i, content] of ['hello', 'hello again'].entries()) {
    const commit = await api.post(`/projects/${id}/repository/commits`, {
      branch: 'master',
      commit_message: `commit ${i}`,
      actions: [{ action: i === 0 ? 'create' : 'update', file_path: 'README.md', content }],
    });
    expect(commit.status).toBe(201);
  }
  expect((await api.post(`/projects/${id}/issues`, { title: 'first issue' })).status).toBe(201);
  await seal();
  // A tail after the last head, sealed (so that the in-process sealer has nothing left to
  // change in the source while the import is compared with it).
  await api.createUser({ username: 'tail_user' });
  await settled(api);
  await waitUntilReadable(api.handle.db);
  await sealPending(api.handle.db);
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await exportBundleTo(api.handle.db, out);
  lines = Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l !== '');
}, 120_000);

afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, any>);
const eventIndexes = () => parsed().flatMap((r, i) => (r.record === undefined ? [i] : []));
let files = 0;

/** Imports these lines into a new database; answers the report or the refusal, and the database. */
async function importLines(variant: string[], options: { publicKey?: typeof publicKey } = {}) {
  const path = join(dir, `bundle-${++files}.ndjson`);
  writeFileSync(path, `${variant.join('\n')}\n`);
  const handle = await openTestDatabase();
  try {
    const report = await importBundleFile(handle.db, path, options);
    return { report, handle };
  } catch (error) {
    return { error: error as Error, handle };
  }
}

/** The log's positions grouped by the transaction that wrote them, in gap-free order: what the ids mean. */
async function transactionGroups(db: DatabaseHandle['db']): Promise<string[][]> {
  const rows = await db.selectFrom('events').select(['transaction_id', 'global_position']).orderBy('transaction_id').orderBy('global_position').execute();
  const groups: string[][] = [];
  let last: string | undefined;
  for (const row of rows) {
    if (row.transaction_id !== last) groups.push([]);
    groups.at(-1)!.push(row.global_position);
    last = row.transaction_id;
  }
  return groups;
}

/** Nothing of a refused import is left: no event, seal, leaf, head, claim, object or upload, and the order trigger is on. */
async function expectUntouched(handle: DatabaseHandle) {
  const { rows } = await sql<Record<string, string>>`
    select (select count(*) from events)::text as events, (select count(*) from event_seals)::text as seals,
           (select count(*) from log_tree_leaves)::text as leaves, (select count(*) from log_tree_heads)::text as heads,
           (select count(*) from claims)::text as claims, (select count(*) from repository_objects)::text as objects,
           (select count(*) from repository_commits)::text as commits, (select count(*) from uploads)::text as uploads,
           (select tgenabled from pg_trigger where tgname = 'events_stream_order')::text as trigger`.execute(handle.db);
  expect(rows[0]).toEqual({ events: '0', seals: '0', leaves: '0', heads: '0', claims: '0', objects: '0', commits: '0', uploads: '0', trigger: 'O' });
}

async function expectRefused(variant: string[], expected: Partial<ImportRefusal>, options: { publicKey?: typeof publicKey } = {}) {
  const { error, report, handle } = await importLines(variant, options);
  try {
    expect(report).toBeUndefined();
    expect(error).toBeInstanceOf(ImportRefused);
    expect((error as ImportRefused).refusal).toMatchObject(expected);
    await expectUntouched(handle);
    return (error as ImportRefused).refusal;
  } finally {
    await handle.close();
  }
}

/** The lines with the end record's counts made to agree again (a tamperer would). */
function recount(variant: string[]): string[] {
  const records = variant.map((l) => JSON.parse(l) as Record<string, any>);
  const counts = { events: 0, uploads: 0, git_objects: 0, tree_heads: 0, seals: 0, sequences: 0, claims: 0 } as Record<string, number>;
  const key: Record<string, string> = { upload: 'uploads', git_object: 'git_objects', tree_head: 'tree_heads', seal: 'seals', sequence: 'sequences', claim: 'claims' };
  for (const r of records) if (r.record === undefined) counts.events! += 1;
  else if (key[r.record]) counts[key[r.record]!]! += 1;
  return variant.map((l) => (JSON.parse(l).record === 'end' ? JSON.stringify({ record: 'end', ...counts }) : l));
}

const withLine = (index: number, change: (r: Record<string, any>) => unknown) =>
  lines.map((l, i) => (i === index ? JSON.stringify(change(JSON.parse(l) as Record<string, any>)) : l));

describe('events import', () => {
  it('imports a bundle whole: the same log, seals, tree, heads, claims, sequences and content; verify finds nothing', async () => {
    const kinds = parsed().map((r) => r.record ?? 'event');
    expect(new Set(kinds)).toEqual(new Set(['bundle', 'upload', 'git_object', 'tree_head', 'seal', 'event', 'sequence', 'claim', 'end']));
    // A bundle's event lines are a plain export's: verifyExport reads it as one.
    const exported = await verifyExport(lines, { feedIndex: feedIndexOf });
    expect(exported.ok).toBe(true);
    expect(exported.eventsChecked).toBe(eventIndexes().length);

    const { report, handle, error } = await importLines(lines, { publicKey });
    try {
      expect(error).toBeUndefined();
      const source = api.handle.db;
      const count = async (db: DatabaseHandle['db'], table: string) => Number((await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(db)).rows[0]!.n);
      for (const table of ['events', 'event_seals', 'log_tree_leaves', 'log_tree_nodes', 'log_tree_heads', 'claims', 'repository_objects', 'repository_commits', 'uploads']) {
        expect([table, await count(handle.db, table)]).toEqual([table, await count(source, table)]);
      }
      expect(report).toMatchObject({ counts: { events: eventIndexes().length }, signaturesChecked: true });
      expect(report!.transactionIds).toBeGreaterThanOrEqual(1);
      expect(report!.headsChecked).toBeGreaterThanOrEqual(2);
      // What the hashes, seals and tree cover is the source's, column for column; transaction ids are re-based.
      const columns = ['global_position', 'stream_id', 'stream_version', 'event_id', 'event_type', 'schema_version', 'data', 'metadata', 'actor_id', 'project_id', 'group_id', 'target_type', 'target_id', 'occurred_at', 'hash'] as const;
      const events = (db: DatabaseHandle['db']) => db.selectFrom('events').select(columns).orderBy('transaction_id').orderBy('global_position').execute();
      expect(await events(handle.db)).toEqual(await events(source));
      const seals = (db: DatabaseHandle['db']) => db.selectFrom('event_seals').select(['id', 'first_position', 'last_position', 'merkle_root', 'seal_hash', 'created_at']).orderBy('id').execute();
      expect(await seals(handle.db)).toEqual(await seals(source));
      const claims = (db: DatabaseHandle['db']) => db.selectFrom('claims').selectAll().orderBy('kind').orderBy('key').execute();
      expect(await claims(handle.db)).toEqual(await claims(source));
      const commits = (db: DatabaseHandle['db']) => db.selectFrom('repository_commits').selectAll().orderBy('project_id').orderBy('sha').execute();
      expect(await commits(handle.db)).toEqual(await commits(source));
      const sequence = async (db: DatabaseHandle['db']) => (await sql<{ v: string }>`select last_value::text as v from users_id_seq`.execute(db)).rows[0]!.v;
      expect(await sequence(handle.db)).toBe(await sequence(source));

      expect(await transactionGroups(handle.db)).toEqual(await transactionGroups(source));

      const verified = await verifyLog(handle.db, { feedIndex: feedIndexOf, objects: repositoryObjectsCheck(handle.db), publicKey });
      expect(verified.problems).toEqual([]);
      const original = await verifyLog(source, { feedIndex: feedIndexOf, publicKey });
      expect({ lastSealHash: verified.lastSealHash, treeSize: verified.treeSize, headsChecked: verified.headsChecked }).toEqual({
        lastSealHash: original.lastSealHash,
        treeSize: original.treeSize,
        headsChecked: original.headsChecked,
      });
      // Readable in gap-free order at once, and a later append sorts after the imported log.
      const { rows } = await sql<{ visible: string; top: string; own: string }>`
        select (select count(*) from events where transaction_id < pg_snapshot_xmin(pg_current_snapshot()))::text as visible,
               (select max(transaction_id) from events)::text as top, pg_current_xact_id()::text as own`.execute(handle.db);
      expect(Number(rows[0]!.visible)).toBe(eventIndexes().length);
      expect(BigInt(rows[0]!.top)).toBeLessThan(BigInt(rows[0]!.own));
      // Reactors start at the end; projections have no checkpoint (rebuild --all writes them).
      const checkpoints = await handle.db.selectFrom('projection_checkpoints').select(['name', 'global_position']).orderBy('name').execute();
      const last = JSON.parse(lines[eventIndexes().at(-1)!]!).global_position as string;
      expect(checkpoints).toEqual(REACTORS.map((r) => ({ name: r.name, global_position: last })).sort((a, b) => a.name.localeCompare(b.name)));

      // A second import into it is refused: the log is not empty.
      const path = join(dir, 'again.ndjson');
      writeFileSync(path, `${lines.join('\n')}\n`);
      await expect(importBundleFile(handle.db, path)).rejects.toBeInstanceOf(ImportTargetNotEmpty);
      expect(await count(handle.db, 'events')).toBe(eventIndexes().length);
    } finally {
      await handle.close();
    }
  }, 120_000);

  it('renumbers transaction ids that do not fit below its own, keeping their order and which events share one', async () => {
    // The same bundle as if written by a cluster far ahead of this one.
    const ahead = (id: string) => String(BigInt(id) + 10n ** 12n);
    const shifted = lines.map((l) => {
      const r = JSON.parse(l) as Record<string, any>;
      if (r.record === 'bundle') return JSON.stringify({ ...r, max_transaction_id: ahead(r.max_transaction_id) });
      if (r.record === 'seal') return JSON.stringify({ ...r, first_transaction_id: ahead(r.first_transaction_id), last_transaction_id: ahead(r.last_transaction_id) });
      if (r.record === undefined) return JSON.stringify({ ...r, transaction_id: ahead(r.transaction_id) });
      return l;
    });
    const { report, handle, error } = await importLines(shifted);
    try {
      expect(error).toBeUndefined();
      expect(report).toMatchObject({ transactionIdsKept: false });
      const groups = await transactionGroups(handle.db);
      expect(groups).toEqual(await transactionGroups(api.handle.db));
      expect(report!.transactionIds).toBe(groups.length);
      const { rows } = await sql<{ low: string; high: string }>`select min(transaction_id)::text as low, max(transaction_id)::text as high from events`.execute(handle.db);
      expect(rows[0]).toEqual({ low: '3', high: String(2 + groups.length) });
      const verified = await verifyLog(handle.db, { feedIndex: feedIndexOf, objects: repositoryObjectsCheck(handle.db), publicKey });
      expect(verified.problems).toEqual([]);
    } finally {
      await handle.close();
    }
  });

  it('stops at an altered event in the middle, naming its line and position, and keeps nothing', async () => {
    const index = eventIndexes()[Math.floor(eventIndexes().length / 2)]!;
    const event = JSON.parse(lines[index]!);
    const refusal = await expectRefused(
      withLine(index, (r) => ({ ...r, data: { ...r.data, tampered: true } })),
      { kind: 'hash_mismatch', line: index + 1, position: event.global_position, streamId: event.stream_id },
    );
    expect(refusal.detail).toMatch(/stored hash/);
  });

  it('refuses a rewritten hash (the next event of the stream no longer chains), an edited feed column, and a stored hash recomputed for altered data (the seal and head see it)', async () => {
    // The stream's events after the altered one: find an event whose stream has a next one.
    const records = parsed();
    const index = eventIndexes().find((i) => records.some((r, j) => j > i && r.stream_id === records[i]!.stream_id))!;
    await expectRefused(withLine(index, (r) => ({ ...r, hash: 'f'.repeat(64) })), { kind: 'hash_mismatch', line: index + 1 });
    // The last event of its stream, its data altered and its hash recomputed: the stream's chain
    // holds, the seal over it (and the head over that) does not.
    const lastOfStream = eventIndexes().find((i) => records[i]!.data && typeof records[i]!.data === 'object' && !records.some((r, j) => j > i && r.stream_id === records[i]!.stream_id))!;
    const rehashed = await expectRefused(
      withLine(lastOfStream, (r) => {
        const previous = records.findLast((p, j) => j < lastOfStream && p.stream_id === r.stream_id);
        const data = { ...r.data, tampered: true };
        const hashed = { streamId: r.stream_id, streamVersion: r.stream_version, eventId: r.event_id, type: r.event_type, schemaVersion: r.schema_version, data, metadata: r.metadata, occurredAt: new Date(r.occurred_at) };
        return { ...r, data, hash: eventHash(previous?.hash ?? '0'.repeat(64), hashed) };
      }),
      {},
    );
    expect(['seal_mismatch', 'head_mismatch', 'index_unchecked']).toContain(rehashed.kind);
    const projectLine = eventIndexes().find((i) => records[i]!.project_id !== null)!;
    await expectRefused(withLine(projectLine, (r) => ({ ...r, project_id: r.project_id + 1 })), { kind: 'index_mismatch', line: projectLine + 1 });
  });

  it('refuses events out of gap-free order, and a removed event', async () => {
    // Two neighbours of one seal (the in-process sealer chooses its own boundaries too; a swap
    // across one is found by the seal first, as seal_hash_mismatch).
    const records = parsed();
    const lastOfSeals = new Set(records.filter((r) => r.record === 'seal').map((r) => String(r.last_position)));
    const events = eventIndexes();
    const at = events.findIndex((i, k) => k >= 3 && events[k + 1] !== undefined && !lastOfSeals.has(String(records[i]!.global_position)));
    const [a, b] = [events[at]!, events[at + 1]!];
    const swapped = [...lines];
    [swapped[a], swapped[b]] = [swapped[b]!, swapped[a]!];
    await expectRefused(recount(swapped), { kind: 'out_of_order', line: b + 1 });
    const removedIndex = eventIndexes().find((i) => records[i]!.stream_version === 1 && records.some((r, j) => j > i && r.stream_id === records[i]!.stream_id))!;
    const next = records.findIndex((r, j) => j > removedIndex && r.stream_id === records[removedIndex]!.stream_id);
    await expectRefused(recount(lines.filter((_, i) => i !== removedIndex)), { kind: 'version_gap', line: next /* one line fewer before it */ });
  });

  it('refuses a cut file, a plain export, and a changed count', async () => {
    const cut = lines.slice(0, eventIndexes()[5]);
    await expectRefused(cut, { kind: 'truncated', line: null });
    await expectRefused(eventIndexes().map((i) => lines[i]!), { kind: 'not_a_bundle', line: 1 });
    const end = lines.length - 1;
    await expectRefused(withLine(end, (r) => ({ ...r, claims: r.claims + 1 })), { kind: 'count_mismatch', line: end + 1 });
  });

  it('checks the seals and the signed heads it carries: an altered root, a forged signature', async () => {
    const records = parsed();
    const sealIndex = records.findIndex((r) => r.record === 'seal');
    const refusal = await expectRefused(withLine(sealIndex, (r) => ({ ...r, merkle_root: '0'.repeat(64) })), { kind: 'seal_hash_mismatch' });
    expect(refusal.line).toBeGreaterThan(sealIndex + 1); // found when the events reach the seal
    const headIndex = records.findIndex((r) => r.record === 'tree_head');
    const otherRoot = createHash('sha256').update('forged').digest('base64');
    await expectRefused(withLine(headIndex, (r) => ({ ...r, sha256_root_hash: otherRoot })), { kind: 'head_mismatch' });
    await expectRefused(withLine(headIndex, (r) => ({ ...r, sha256_root_hash: otherRoot })), { kind: 'head_signature_invalid', line: headIndex + 1 }, { publicKey });
  });

  it('carries git objects and uploads, each hashed again; an event naming one the file lacks is refused', async () => {
    const records = parsed();
    const objectIndex = records.findIndex((r) => r.record === 'git_object');
    await expectRefused(
      withLine(objectIndex, (r) => ({ ...r, content: Buffer.from(`${Buffer.from(r.content, 'base64').toString('latin1')}x`, 'latin1').toString('base64') })),
      { kind: 'object_mismatch', line: objectIndex + 1 },
    );
    // Without the commits, the event that moved the branch names an object not carried.
    const commitIndexes = records.flatMap((r, i) => (r.record === 'git_object' && r.type === 'commit' ? [i] : []));
    const missing = await expectRefused(recount(lines.filter((_, i) => !commitIndexes.includes(i))), { kind: 'object_missing' });
    expect(missing.line).toBeGreaterThan(records.findIndex((r) => r.record === undefined));
    expect(missing.position).toBeDefined();
    const uploadIndex = records.findIndex((r) => r.record === 'upload');
    await expectRefused(withLine(uploadIndex, (r) => ({ ...r, content: Buffer.from('not the avatar').toString('base64') })), { kind: 'upload_mismatch', line: uploadIndex + 1 });
    const named = await expectRefused(recount(lines.filter((_, i) => i !== uploadIndex)), { kind: 'upload_missing' });
    expect(JSON.parse(lines[named.line! ]!).event_type).toMatch(/User/);
  });

  it('refuses a claim held by a stream the log lacks, and a sequence this database does not have', async () => {
    const records = parsed();
    const claimIndex = records.findIndex((r) => r.record === 'claim');
    await expectRefused(withLine(claimIndex, (r) => ({ ...r, stream_id: 'user-999999' })), { kind: 'claim_orphaned', line: null });
    const sequenceIndex = records.findIndex((r) => r.record === 'sequence');
    await expectRefused(withLine(sequenceIndex, (r) => ({ ...r, name: 'widgets_id_seq' })), { kind: 'unknown_sequence', line: sequenceIndex + 1 });
  });

  it('refuses a repeated event id with its line (the database constraint, named)', async () => {
    const [a, b] = eventIndexes().slice(-2) as [number, number];
    const first = JSON.parse(lines[a]!);
    const refusal = await expectRefused(withLine(b, (r) => ({ ...r, event_id: first.event_id })), {});
    // The chain catches it first (the event id is hashed): either way the line is named.
    expect(['hash_mismatch', 'duplicate']).toContain(refusal.kind);
    expect(refusal.line).toBe(b + 1);
    expect(readFileSync(join(dir, `bundle-${files}.ndjson`), 'utf8')).toContain(first.event_id);
  });
});
