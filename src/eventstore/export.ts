import type { Writable } from 'node:stream';
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../database/database.js';
import { FEED_COLUMNS, type FeedIndexOf } from './feed-index.js';
import { readRowsAfter, type SealRecord } from './seal.js';
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
  let cursor = 0;
  let count = 0;
  for (;;) {
    const rows = await db.selectFrom('event_seals').selectAll().where('id', '>', cursor).orderBy('id').limit(1000).execute();
    for (const row of rows) {
      const line: SealRecord & { created_at: string } = {
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
      if (!out.write(`${JSON.stringify(line)}\n`)) await drained(out);
      count += 1;
    }
    const last = rows.at(-1);
    if (!last) return count;
    cursor = last.id;
  }
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
    const event = parseLine(line);
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

function parseLine(line: string): ExportedEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const e = value as Partial<ExportedEvent> | null;
  const valid =
    e !== null &&
    typeof e === 'object' &&
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
    typeof e.occurred_at === 'string' &&
    !Number.isNaN(Date.parse(e.occurred_at)) &&
    typeof e.hash === 'string' &&
    FEED_COLUMNS.every((column) => e[column] === null || typeof e[column] === (column === 'target_type' ? 'string' : 'number'));
  return valid ? (e as ExportedEvent) : undefined;
}

function chainEventOf(event: ExportedEvent): ChainEvent {
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

export type { Problem };
