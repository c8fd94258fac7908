import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { exportEvents, exportSeals, parseSealLine, verifyExport, type ExportOptions } from '../../src/eventstore/export.js';
import { Notifier } from '../../src/eventstore/notifier.js';
import { sealPending } from '../../src/eventstore/seal.js';
import { openTestDatabase } from '../support/database.js';
import { append, waitUntilReadable } from './audit-support.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
  await append(handle.db, 'project-1', ['ProjectCreated', 'ProjectRenamed'], (type, i) => ({
    type,
    name: i === 0 ? 'Ünïcode ✓ "quoted"\n' : 'renamed',
    nested: { list: [1, 2.5, null, { z: true, a: 'x' }], empty: {} },
  }));
  await append(handle.db, 'user-1', ['UserCreated']);
  await append(handle.db, 'project-1', ['ProjectArchived']);
  await append(handle.db, 'group-1', ['GroupCreated', 'GroupRenamed', 'GroupRenamed']);
  await waitUntilReadable(handle.db);
  await sealPending(handle.db, { maxEventsPerSeal: 3 });
});
afterAll(() => handle.close());

async function exportToString(options: ExportOptions = {}) {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const result = await exportEvents(handle.db, out, options);
  return { result, text: Buffer.concat(chunks).toString('utf8') };
}

const linesOf = (text: string) => text.split('\n').filter((l) => l !== '');

const COLUMNS = [
  'global_position',
  'transaction_id',
  'stream_id',
  'stream_version',
  'event_id',
  'event_type',
  'schema_version',
  'data',
  'metadata',
  'actor_id',
  'project_id',
  'group_id',
  'target_type',
  'target_id',
  'occurred_at',
  'hash',
];

describe('exportEvents', () => {
  it('writes every stored column, one event per line, in gap-free order', async () => {
    const { result, text } = await exportToString({ pageSize: 2 });
    expect(text.endsWith('\n')).toBe(true);
    const lines = linesOf(text).map((l) => JSON.parse(l) as Record<string, unknown>);
    const rows = await handle.db.selectFrom('events').selectAll().orderBy('transaction_id').orderBy('global_position').execute();
    expect(lines).toHaveLength(7);
    expect(result.events).toBe(7);
    expect(result.checkpoint).toEqual({ transactionId: rows[6]!.transaction_id, globalPosition: rows[6]!.global_position });
    lines.forEach((line, i) => {
      const row = rows[i]!;
      expect(Object.keys(line)).toEqual(COLUMNS);
      expect(line).toEqual({ ...row, occurred_at: row.occurred_at.toISOString() });
      expect(typeof line.global_position).toBe('string');
      expect(typeof line.transaction_id).toBe('string');
    });
    expect(lines[0]).toMatchObject({
      stream_id: 'project-1',
      stream_version: 1,
      data: { name: 'Ünïcode ✓ "quoted"\n', nested: { list: [1, 2.5, null, { z: true, a: 'x' }], empty: {} } },
      metadata: { actor_id: 1, request_id: 'req-project-1', ip: '127.0.0.1' },
      actor_id: 1,
      project_id: 7,
      group_id: null,
      target_type: 'Thing',
      target_id: 0,
      occurred_at: '2026-01-01T00:00:00.000Z',
    });
  });

  it('resumes after a checkpoint and exports one stream', async () => {
    const all = linesOf((await exportToString()).text).map((l) => JSON.parse(l) as { global_position: string; transaction_id: string; stream_id: string });
    const after = { transactionId: all[2]!.transaction_id, globalPosition: all[2]!.global_position };
    const rest = linesOf((await exportToString({ after })).text).map((l) => JSON.parse(l) as { global_position: string });
    expect(rest.map((e) => e.global_position)).toEqual(all.slice(3).map((e) => e.global_position));

    const stream = linesOf((await exportToString({ streamId: 'project-1' })).text).map((l) => JSON.parse(l) as { stream_version: number });
    expect(stream.map((e) => e.stream_version)).toEqual([1, 2, 3]);
  });

  it('honours back-pressure from a slow reader', async () => {
    const received: string[] = [];
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, callback) {
        received.push(chunk.toString());
        setTimeout(callback, 2);
      },
    });
    const result = await exportEvents(handle.db, slow, {});
    await new Promise((resolve) => slow.end(resolve));
    expect(result.events).toBe(7);
    expect(received).toHaveLength(7);
  });

  it('follows the log: an event appended later arrives, and the signal stops it', async () => {
    const notifier = new Notifier();
    const controller = new AbortController();
    const out = new PassThrough();
    let text = '';
    const arrived = new Promise<void>((resolve) =>
      out.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('"stream_id":"late-1"')) resolve();
      }),
    );
    // Polling every 30 s: only the notifier's wake-up can deliver the event in time.
    const running = exportEvents(handle.db, out, {
      follow: true,
      signal: controller.signal,
      pollIntervalMs: 30_000,
      onAppended: (wake) => notifier.onAppended(wake),
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(linesOf(text)).toHaveLength(7);
    await append(handle.db, 'late-1', ['LateArrived']);
    await waitUntilReadable(handle.db);
    notifier.appended();
    await arrived;
    controller.abort();
    const result = await running;
    expect(result.events).toBe(8);
    expect(JSON.parse(linesOf(text)[7]!)).toMatchObject({ stream_id: 'late-1', event_type: 'LateArrived' });
    await notifier.close();
  });
});

describe('verifyExport', () => {
  let lines: string[];
  let sealLines: string[];
  beforeAll(async () => {
    // Seal the late event too, so the file and the seal chain end together.
    await sealPending(handle.db, { maxEventsPerSeal: 3 });
    lines = linesOf((await exportToString()).text);
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    await exportSeals(handle.db, out);
    sealLines = linesOf(text);
  });
  const seals = () => sealLines.map(parseSealLine);

  it('proves the chains and the seals from the files alone', async () => {
    expect(sealLines).toHaveLength(4); // positions 1–3, 4–6, 7, then the late event
    const report = await verifyExport(lines, { seals: seals() });
    expect(report).toMatchObject({ ok: true, eventsChecked: 8, streamsChecked: 4, sealsChecked: 4, sealedEvents: 8, unsealedEvents: 0, sealsSkipped: 0 });
    expect(report.lastSealHash).toBe(JSON.parse(sealLines[3]!).seal_hash);
  });

  it('reads lines from an async source (a file being read)', async () => {
    async function* source() {
      yield* lines;
    }
    expect((await verifyExport(source())).ok).toBe(true);
  });

  it('finds an altered line', async () => {
    const altered = lines.map((l, i) => (i === 1 ? l.replace('"renamed"', '"forged"') : l));
    const report = await verifyExport(altered, { seals: seals() });
    expect(report.problems.map((p) => p.kind)).toEqual(['hash_mismatch', 'seal_mismatch']);
  });

  it('finds a dropped line and lines out of order', async () => {
    const dropped = lines.filter((_, i) => i !== 0);
    expect((await verifyExport(dropped)).problems.map((p) => p.kind)).toEqual(['version_gap']);
    const swapped = [lines[1]!, lines[0]!, ...lines.slice(2)];
    expect((await verifyExport(swapped)).problems.map((p) => p.kind)).toContain('out_of_order');
  });

  it('reports a line that is not an event', async () => {
    expect((await verifyExport([...lines, '{"nope":1}'])).problems).toEqual([expect.objectContaining({ kind: 'malformed_line', detail: 'line 9 is not an exported event' })]);
  });

  it('checks a partial file (exported after a checkpoint) from where it starts', async () => {
    expect((await verifyExport(lines.slice(3))).problems).toEqual([expect.objectContaining({ kind: 'version_gap', streamId: 'project-1' })]);
    expect((await verifyExport(lines.slice(3), { partial: true })).ok).toBe(true);
    const tail = lines.slice(4); // starts inside the second seal's range
    const report = await verifyExport(tail, { partial: true, seals: seals() });
    expect(report).toMatchObject({ ok: true, eventsChecked: 4, sealsChecked: 2, sealsSkipped: 2 });
    const altered = tail.map((l, i) => (i === 3 ? l.replace('"LateArrived"', '"Forged"') : l));
    expect((await verifyExport(altered, { partial: true, seals: seals() })).problems.map((p) => p.kind)).toEqual(['hash_mismatch', 'seal_mismatch']);
  });
});
