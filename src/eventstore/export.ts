import type { Writable } from 'node:stream';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../database/database.js';
import { FEED_COLUMNS, type FeedIndexOf } from './feed-index.js';
import { readRowsAfter, type SealRecord } from './seal.js';
import { afterCheckpoint } from './store.js';
import { publishedHeads, treeHeadJson } from './tree-heads.js';
import { heardAllAlong, sleep } from './waits.js';
import type { EventMetadataRow, EventsTable } from './tables.js';
import { LOG_START, compareCheckpoints, type Checkpoint } from './types.js';
import {
  SealChecker,
  checkChainLink,
  checkFeedIndex,
  emptyReport,
  reporter,
  type ChainEvent,
  type Problem,
  type StreamHead,
  type VerifyReport,
} from './verify.js';

/**
 * `forgelog events export / tail`: the log as NDJSON, one stored row per line, in gap-free
 * order, exactly as stored (no upcasting: the hashes cover the stored shape). A file
 * exported from the start of the log can be checked without the database
 * (`verifyExport`).
 */

/** One exported line: every stored column. Positions and transaction ids are decimal strings. */
export interface ExportedEvent {
  global_position: string;
  transaction_id: string;
  stream_id: string;
  stream_version: number;
  event_id: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: EventMetadataRow;
  actor_id: number | null;
  project_id: number | null;
  group_id: number | null;
  target_type: string | null;
  target_id: number | null;
  /** ISO 8601, UTC, milliseconds (what the hash covers). */
  occurred_at: string;
  hash: string;
}

export function toExportedEvent(row: Selectable<EventsTable>): ExportedEvent {
  return {
    global_position: row.global_position,
    transaction_id: row.transaction_id,
    stream_id: row.stream_id,
    stream_version: row.stream_version,
    event_id: row.event_id,
    event_type: row.event_type,
    schema_version: row.schema_version,
    data: row.data,
    metadata: row.metadata,
    actor_id: row.actor_id,
    project_id: row.project_id,
    group_id: row.group_id,
    target_type: row.target_type,
    target_id: row.target_id,
    occurred_at: row.occurred_at.toISOString(),
    hash: row.hash,
  };
}

export interface ExportOptions {
  /** Start after this checkpoint (default: the start of the log). */
  after?: Checkpoint;
  /** Only this stream's events. */
  streamId?: string;
  /** Keep tailing the log after catching up, until the signal aborts. */
  follow?: boolean;
  signal?: AbortSignal;
  /** Wake-up hint when following (Notifier.onAppended); polling runs anyway. */
  onAppended?: (wake: () => void) => () => void;
  /** Polling interval when following (default 1000 ms). */
  pollIntervalMs?: number;
  /** Rows per query (default 1000). */
  pageSize?: number;
}

export interface ExportResult {
  events: number;
  /** Where the export stopped: pass it as `after` to resume. */
  checkpoint: Checkpoint;
}

/**
 * Writes events after `after` as NDJSON to `out`, in gap-free order (only events of
 * transactions older than every running one, so a resumed or followed export never skips
 * an event that commits late). Honours back-pressure; stops quietly when `out` closes
 * (e.g. `| head`) or the signal aborts.
 */
export async function exportEvents(db: Kysely<Database>, out: Writable, options: ExportOptions = {}): Promise<ExportResult> {
  const pageSize = options.pageSize ?? 1000;
  const { signal } = options;
  let checkpoint = options.after ?? LOG_START;
  let events = 0;
  let failure: Error | undefined;
  const onError = (error: Error) => (failure = error);
  out.on('error', onError);
  const closed = () => failure !== undefined || out.destroyed || out.writableEnded;
  const wakeups = heardAllAlong(options.follow ? options.onAppended : undefined);
  try {
    while (!signal?.aborted && !closed()) {
      const rows = await readRowsAfter(db, checkpoint, pageSize, options.streamId);
      for (const row of rows) {
        if (closed()) break;
        const ok = out.write(`${JSON.stringify(toExportedEvent(row))}\n`);
        checkpoint = { transactionId: row.transaction_id, globalPosition: row.global_position };
        events += 1;
        if (!ok) await drained(out, signal);
      }
      if (rows.length === pageSize) continue;
      if (!options.follow) break;
      await sleep(options.pollIntervalMs ?? 1000, signal, wakeups.subscribe);
    }
  } finally {
    wakeups.close();
    out.off('error', onError);
  }
  if (failure && (failure as NodeJS.ErrnoException).code !== 'EPIPE') throw failure;
  return { events, checkpoint };
}

function drained(out: Writable, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done).off('close', done).off('error', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    out.on('drain', done).on('close', done).on('error', done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The seal chain as NDJSON (one seal row per line), for `verifyExport(…, { seals })`. */
export async function exportSeals(db: Kysely<Database>, out: Writable): Promise<number> {
  let count = 0;
  for await (const line of sealRows(db, 1000)) {
    if (!out.write(`${JSON.stringify(line)}\n`)) await drained(out);
    count += 1;
  }
  return count;
}

export interface VerifyExportOptions {
  /** The seal chain (rows of `exportSeals`), checked against the file's events. */
  seals?: Iterable<SealRecord> | AsyncIterable<SealRecord>;
  /**
   * The file was exported with `after` (or by stream): streams may start above version 1
   * and seals not wholly inside the file are skipped.
   */
  partial?: boolean;
  maxProblems?: number;
  /** Recomputes each line's feed index columns to compare with those the line carries (as verifyLog's). */
  feedIndex?: FeedIndexOf;
}

export interface VerifyExportReport extends VerifyReport {
  /** Seals whose range is not wholly inside the file (partial files only). */
  sealsSkipped: number;
}

/**
 * Checks an exported NDJSON file without the database: gap-free order, every stream's
 * hash chain, with `feedIndex` every line's feed index columns, and — given the seal
 * chain — every seal's count and Merkle root. Keeps one head (version, hash) per stream in
 * memory.
 */
export async function verifyExport(
  lines: Iterable<string> | AsyncIterable<string>,
  options: VerifyExportOptions = {},
): Promise<VerifyExportReport> {
  const report = emptyReport();
  const problem = reporter(report, options.maxProblems ?? 1000);
  const partial = options.partial ?? false;
  const heads = new Map<string, StreamHead>();
  const sealSource = options.seals ? iterate(options.seals) : undefined;
  const seals = sealSource ? new SealChecker(async () => (await sealSource.next()).value ?? undefined, problem, partial) : undefined;
  let previous: Checkpoint | undefined;
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    const value = parseJson(line);
    // A bundle's other records (exportBundle): the events are checked, the rest is import's.
    if (isBundleRecord(value)) continue;
    const event = asExportedEvent(value);
    if (!event) {
      problem({ kind: 'malformed_line', detail: `line ${lineNumber} is not an exported event` });
      continue;
    }
    const at = { transactionId: event.transaction_id, globalPosition: event.global_position };
    if (previous && compareCheckpoints(at, previous) <= 0) {
      problem({
        kind: 'out_of_order',
        streamId: event.stream_id,
        position: event.global_position,
        detail: `line ${lineNumber} is not after the previous line in (transaction_id, global_position) order`,
      });
    }
    previous = at;
    if (!heads.has(event.stream_id)) report.streamsChecked += 1;
    const chained = chainEventOf(event);
    heads.set(event.stream_id, checkChainLink(heads.get(event.stream_id), chained, problem, partial));
    report.eventsChecked += 1;
    if (options.feedIndex && checkFeedIndex(chained, event.metadata, event, options.feedIndex, problem)) report.indexesChecked += 1;
    await seals?.push({ ...chained, transactionId: event.transaction_id });
  }
  let sealsSkipped = 0;
  if (seals) {
    await seals.end();
    sealsSkipped = seals.sealsSkipped;
    report.sealsChecked = seals.sealsChecked;
    report.sealedEvents = seals.sealedEvents;
    report.unsealedEvents = seals.tailEvents;
    report.lastSealHash = seals.lastSealHash;
  } else report.unsealedEvents = report.eventsChecked;
  return { ...report, sealsSkipped };
}

/** Parses one line of an `exportSeals` file. */
export function parseSealLine(line: string): SealRecord {
  return JSON.parse(line) as SealRecord;
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** A parsed line as an exported event, if it is one (every column present, with its type). */
export function asExportedEvent(value: unknown): ExportedEvent | undefined {
  const e = value as Partial<ExportedEvent> | null | undefined;
  const valid =
    e !== null &&
    e !== undefined &&
    typeof e === 'object' &&
    !Array.isArray(e) &&
    typeof e.global_position === 'string' &&
    /^\d+$/.test(e.global_position) &&
    typeof e.transaction_id === 'string' &&
    /^\d+$/.test(e.transaction_id) &&
    typeof e.stream_id === 'string' &&
    Number.isInteger(e.stream_version) &&
    typeof e.event_id === 'string' &&
    typeof e.event_type === 'string' &&
    Number.isInteger(e.schema_version) &&
    'data' in e &&
    typeof e.metadata === 'object' &&
    e.metadata !== null &&
    !Array.isArray(e.metadata) &&
    typeof e.occurred_at === 'string' &&
    !Number.isNaN(Date.parse(e.occurred_at)) &&
    typeof e.hash === 'string' &&
    FEED_COLUMNS.every((column) => e[column] === null || typeof e[column] === (column === 'target_type' ? 'string' : 'number'));
  return valid ? (e as ExportedEvent) : undefined;
}

export function chainEventOf(event: ExportedEvent): ChainEvent {
  return {
    globalPosition: event.global_position,
    streamId: event.stream_id,
    streamVersion: event.stream_version,
    eventId: event.event_id,
    type: event.event_type,
    schemaVersion: event.schema_version,
    data: event.data,
    metadata: event.metadata,
    occurredAt: new Date(event.occurred_at),
    hash: event.hash,
  };
}

function iterate<T>(source: Iterable<T> | AsyncIterable<T>): AsyncIterator<T> {
  if (Symbol.asyncIterator in source) return source[Symbol.asyncIterator]();
  const it = source[Symbol.iterator]();
  return { next: async () => it.next() };
}

// ---------------------------------------------------------------------------------------
// Bundles: the log with what an import needs beside it

/**
 * `forgelog events export --bundle`: everything `forgelog events import` needs to make
 * another database answer as this one does, as NDJSON. The event lines are exactly those of
 * a plain export (so `verifyExport` and auditors' tools read a bundle as they read a plain
 * file; they skip the other lines); every other line is an object with a `record` field:
 *
 *   bundle      the first line: format, version, when, how many transactions wrote the log and the newest's id
 *   upload      an uploaded file (avatars): sha256, content (base64)
 *   git_object  a repository's git object: project_id, sha, type, content (base64)
 *   tree_head   a signed tree head (GET /-/log/head's shape)
 *   seal        a seal row (exportSeals's shape)
 *   …the events, in gap-free order…
 *   sequence    a sequence's value (ids are taken from sequences at command time)
 *   claim       a uniqueness claim (kind, key, stream_id)
 *   end         the last line: how many records of each kind came before (a cut file is refused)
 *
 * Content, heads and seals come before the events so an import checks each event against
 * them as it reads it; sequences and claims after them, as they were after the last event.
 * Everything is read in one REPEATABLE READ snapshot, so the records agree with each other.
 * Not in a bundle, on purpose: instance keys and every secret sealed with them
 * (integration_secrets, hook_secrets, sealed application settings), idempotency keys,
 * delivery records, reactor receipts, projection checkpoints, Geo state, read tables.
 */
export const BUNDLE_FORMAT = 'forgelog-bundle';
export const BUNDLE_VERSION = 1;

export interface BundleUpload {
  sha256: string;
  content: Buffer;
}

export interface BundleGitObject {
  project_id: number;
  sha: string;
  type: string;
  content: Buffer;
}

/** What a bundle carries beside the log, read and written by the areas that own it (src/projections/bundle-content.ts). */
export interface BundleContentSource {
  uploads(db: Kysely<Database>): AsyncIterable<BundleUpload>;
  gitObjects(db: Kysely<Database>): AsyncIterable<BundleGitObject>;
}

export type BundleCounts = Record<'events' | 'uploads' | 'git_objects' | 'tree_heads' | 'seals' | 'sequences' | 'claims', number>;

export const emptyBundleCounts = (): BundleCounts => ({ events: 0, uploads: 0, git_objects: 0, tree_heads: 0, seals: 0, sequences: 0, claims: 0 });

/** Whether a parsed line is a bundle record other than an event. */
export function isBundleRecord(value: unknown): value is { record: string } {
  return typeof value === 'object' && value !== null && typeof (value as { record?: unknown }).record === 'string';
}

/** Writes a bundle of the whole database to `out`; answers how many records of each kind. */
export async function exportBundle(db: Kysely<Database>, out: Writable, content: BundleContentSource, options: { pageSize?: number } = {}): Promise<BundleCounts> {
  const pageSize = options.pageSize ?? 1000;
  const counts = emptyBundleCounts();
  let failure: Error | undefined;
  const onError = (error: Error) => (failure = error);
  out.on('error', onError);
  const write = async (value: unknown) => {
    if (failure) throw failure;
    if (!out.write(`${JSON.stringify(value)}\n`)) await drained(out);
  };
  try {
    await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        // How many transactions wrote the log, and the newest: what an import needs to know
        // before it reads the events to place them in its own cluster (import.ts).
        const { rows: spans } = await sql<{ transactions: string; max: string | null }>`
          select count(distinct transaction_id)::text as transactions, max(transaction_id)::text as max from events`.execute(trx);
        const span = spans[0]!;
        await write({
          record: 'bundle',
          format: BUNDLE_FORMAT,
          version: BUNDLE_VERSION,
          exported_at: new Date().toISOString(),
          transactions: Number(span.transactions),
          max_transaction_id: span.max,
        });
        for await (const upload of content.uploads(trx)) {
          await write({ record: 'upload', sha256: upload.sha256, content: upload.content.toString('base64') });
          counts.uploads += 1;
        }
        for await (const object of content.gitObjects(trx)) {
          await write({ record: 'git_object', project_id: object.project_id, sha: object.sha, type: object.type, content: object.content.toString('base64') });
          counts.git_objects += 1;
        }
        for await (const head of publishedHeads(trx)) {
          await write({ record: 'tree_head', ...treeHeadJson(head) });
          counts.tree_heads += 1;
        }
        for await (const seal of sealRows(trx, pageSize)) {
          await write({ record: 'seal', ...seal });
          counts.seals += 1;
        }
        // Every event the snapshot holds, in gap-free order: no horizon, since nothing can
        // commit into this snapshot any more (and its claims and sequences are read with it).
        let at = LOG_START;
        for (;;) {
          const rows = await trx
            .selectFrom('events')
            .selectAll()
            .where(afterCheckpoint(at))
            .orderBy('transaction_id')
            .orderBy('global_position')
            .limit(pageSize)
            .execute();
          for (const row of rows) await write(toExportedEvent(row));
          counts.events += rows.length;
          const last = rows.at(-1);
          if (!last || rows.length < pageSize) break;
          at = { transactionId: last.transaction_id, globalPosition: last.global_position };
        }
        const { rows: sequences } = await sql<{ name: string; value: string | null }>`
          select sequencename::text as name, last_value::text as value from pg_sequences
           where schemaname = 'public' order by sequencename`.execute(trx);
        for (const sequence of sequences) {
          await write({ record: 'sequence', name: sequence.name, value: sequence.value });
          counts.sequences += 1;
        }
        let claim = { kind: '', key: '' };
        for (;;) {
          const rows = await trx
            .selectFrom('claims')
            .selectAll()
            .where(sql<boolean>`(kind, key) > (${claim.kind}, ${claim.key})`)
            .orderBy('kind')
            .orderBy('key')
            .limit(pageSize)
            .execute();
          for (const row of rows) await write({ record: 'claim', kind: row.kind, key: row.key, stream_id: row.stream_id });
          counts.claims += rows.length;
          const last = rows.at(-1);
          if (!last || rows.length < pageSize) break;
          claim = { kind: last.kind, key: last.key };
        }
        await write({ record: 'end', ...counts });
      });
  } finally {
    out.off('error', onError);
  }
  if (failure) throw failure;
  return counts;
}

async function* sealRows(db: Kysely<Database>, pageSize: number): AsyncGenerator<SealRecord & { created_at: string }> {
  let cursor = 0;
  for (;;) {
    const rows = await db.selectFrom('event_seals').selectAll().where('id', '>', cursor).orderBy('id').limit(pageSize).execute();
    for (const row of rows) {
      yield {
        id: row.id,
        first_transaction_id: row.first_transaction_id,
        first_position: row.first_position,
        last_transaction_id: row.last_transaction_id,
        last_position: row.last_position,
        event_count: row.event_count,
        merkle_root: row.merkle_root,
        previous_seal_hash: row.previous_seal_hash,
        seal_hash: row.seal_hash,
        created_at: row.created_at.toISOString(),
      };
    }
    const last = rows.at(-1);
    if (!last || rows.length < pageSize) return;
    cursor = last.id;
  }
}

export type { Problem };
