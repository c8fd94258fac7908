import type { KeyObject } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../database/database.js';
import { FEED_COLUMNS, type FeedColumns, type FeedIndexOf } from './feed-index.js';
import { GENESIS_HASH, eventDigests } from './hash.js';
import { MerkleBuilder, leafFieldsOfRow, sealEnd, sealHash, sealStart, type LeafFields, type SealRecord } from './seal.js';
import { afterCheckpoint } from './store.js';
import type { EventsTable } from './tables.js';
import { LOG_START, compareCheckpoints, type Checkpoint, type EventMetadata } from './types.js';
import type { TreeHead } from './tree-heads.js';
import { upcast } from './upcasters.js';
import { TreeChecker, type TreeProblemKind } from './verify-tree.js';

/**
 * `forgelog events verify`: every stream's hash chain, every event's feed index columns
 * (given the function that recomputes them), every seal, and the log's Merkle tree with its
 * signed heads and a head the auditor kept (verify-tree.ts), streamed through the log in
 * pages (one keyset scan in gap-free order), so memory stays flat however long the log is.
 */

export type ProblemKind =
  /** A stream's versions are not 1, 2, 3… (an event removed, or renumbered). */
  | 'version_gap'
  /** The recomputed hash differs: data, metadata or another hashed field was altered, the version was reordered, or the previous event changed. */
  | 'hash_mismatch'
  /** An event lies outside every seal but before the last one (inserted after sealing). */
  | 'unsealed_event'
  /** The events now in a seal's range give another count or Merkle root (removed, inserted, altered or reordered). */
  | 'seal_mismatch'
  /** A seal's previous_seal_hash is not the previous seal's hash (a seal removed or replaced). */
  | 'seal_chain_broken'
  /** A seal's own fields do not give its seal_hash (the seal row was altered). */
  | 'seal_hash_mismatch'
  /** A seal's range does not start after the previous seal's range. */
  | 'seal_out_of_order'
  /** A feed index column (actor_id, project_id, group_id, target_type, target_id) is not what the event's data and metadata give: the column was edited. */
  | 'index_mismatch'
  /** An event's feed index columns cannot be recomputed: no aggregate defines its type, or its data cannot be upcast and indexed. */
  | 'index_unchecked'
  /** A stored object's content does not give the name it is stored under (edited, or swapped with another). */
  | 'object_mismatch'
  /** An object an event or another object names is not stored, or is stored as another type. */
  | 'object_missing'
  /** A commit's row of the commit graph index, or its rows of the per-path change index, are not what its object gives (edited, removed or added). */
  | 'commit_index_mismatch'
  /** Export files only: a line that is not an exported event. */
  | 'malformed_line'
  /** Export files only: lines not in gap-free order. */
  | 'out_of_order'
  /** The log tree and its signed heads (verify-tree.ts). */
  | TreeProblemKind;

export interface Problem {
  kind: ProblemKind;
  streamId?: string;
  /** The event's global position (for a seal: the first position of its range). */
  position?: string;
  sealId?: string;
  /** A signed head's tree size (head_* and consistency_failed). */
  treeSize?: number;
  /** index_mismatch: the column, its stored value and the value recomputed from the event. */
  column?: keyof FeedColumns;
  stored?: number | string | null;
  recomputed?: number | string | null;
  /** object_*: the project whose object it is, and the object's name. */
  projectId?: number;
  sha?: string;
  detail: string;
}

export interface VerifyReport {
  ok: boolean;
  streamsChecked: number;
  eventsChecked: number;
  /** Events whose feed index columns were recomputed and compared (0 without `feedIndex`). */
  indexesChecked: number;
  sealsChecked: number;
  /** Events covered by the seals checked. */
  sealedEvents: number;
  /** Events after the last seal (not sealed yet; their stream chains are still checked). */
  unsealedEvents: number;
  /** Stored objects whose content was hashed again (0 without `objects`). */
  objectsChecked: number;
  /** Hash of the newest seal checked: compare it with a copy kept outside the database. */
  lastSealHash: string;
  /** Leaves of the stored log tree (the sealed events). */
  treeSize: number;
  /** Published signed heads whose roots were recomputed. */
  headsChecked: number;
  /**
   * Whether the heads' signatures were checked (a public key was given). Without it a head
   * rewritten together with the log, its signature left stale, passes: `ok` then speaks for
   * the roots only.
   */
  signaturesChecked: boolean;
  /** The tree size of the head kept outside the database, when one was given (`--against`). */
  keptHeadSize: number | null;
  problems: Problem[];
  /** Problems found in all; only the first `maxProblems` are listed. */
  problemCount: number;
}

export interface VerifyProgress {
  phase: 'streams' | 'seals' | 'objects';
  streamsChecked: number;
  eventsChecked: number;
  sealsChecked: number;
  objectsChecked: number;
}

export interface VerifyOptions {
  onProgress?: (progress: VerifyProgress) => void;
  /** Rows per page (default 1000). */
  pageSize?: number;
  /** Problems listed in the report (default 1000; the rest are only counted). */
  maxProblems?: number;
  /** Recomputes each event's feed index columns to compare with the stored ones (without it they are not checked). */
  feedIndex?: FeedIndexOf;
  /** Checks what the events name outside the log (git objects), and that store itself (without it neither is checked). */
  objects?: ObjectStoreCheck;
  /** A signed head kept outside the database: the log must still give its root, and the stored tree must prove it a prefix of today's. */
  keptHead?: TreeHead;
  /** The log key's public half, for the signatures of the kept head and of every published head (without it, only their roots are checked). */
  publicKey?: KeyObject;
}

/**
 * Content the log names by hash and keeps outside it (a repository's git objects): the log's
 * hash chain covers the names, not the content, so the content is checked against its names.
 */
export interface ObjectStoreCheck {
  /** Each page of events of the chain pass: reports every object one of them names that is not stored as the type named. */
  named(events: readonly ChainEvent[], problem: (p: Problem) => void): Promise<void>;
  /** The store itself: every object hashed again, and every object another names present. Answers how many were checked. */
  store(problem: (p: Problem) => void, onPage: (objectsChecked: number) => void): Promise<number>;
}

export function emptyReport(): VerifyReport {
  return {
    ok: true,
    streamsChecked: 0,
    eventsChecked: 0,
    indexesChecked: 0,
    sealsChecked: 0,
    sealedEvents: 0,
    unsealedEvents: 0,
    objectsChecked: 0,
    lastSealHash: GENESIS_HASH,
    treeSize: 0,
    headsChecked: 0,
    signaturesChecked: false,
    keptHeadSize: null,
    problems: [],
    problemCount: 0,
  };
}

export function reporter(report: VerifyReport, maxProblems: number): (problem: Problem) => void {
  return (problem) => {
    report.ok = false;
    report.problemCount += 1;
    if (report.problems.length < maxProblems) report.problems.push(problem);
  };
}

// ---------------------------------------------------------------------------------------
// Stream chains

export type ChainEvent = LeafFields;

export interface StreamHead {
  version: number;
  hash: string;
}

/**
 * Checks one event against its stream's head (undefined before the first event seen) and
 * returns the new head, with the event's content digest when it was computed (a seal leaf
 * needs it: SealChecker.push). After a problem the chain goes on from the stored hash, so one
 * altered event is reported once rather than for every event after it. With `anchor`, a
 * stream first seen above version 1 (a partial export) is trusted from there.
 */
export function checkChainLink(
  head: StreamHead | undefined,
  event: ChainEvent,
  problem: (p: Problem) => void,
  anchor = false,
): StreamHead & { content?: string } {
  const next = { version: event.streamVersion, hash: event.hash };
  const at = { streamId: event.streamId, position: event.globalPosition };
  if (!head && anchor && event.streamVersion > 1) return next;
  const expected = (head?.version ?? 0) + 1;
  if (event.streamVersion !== expected) {
    const missing = event.streamVersion - expected === 1 ? `version ${expected} is` : `versions ${expected}–${event.streamVersion - 1} are`;
    const detail =
      event.streamVersion > expected
        ? `version ${event.streamVersion} follows version ${expected - 1}: ${missing} missing`
        : `version ${event.streamVersion} follows version ${expected - 1}: versions out of order`;
    problem({ kind: 'version_gap', ...at, detail });
    return next;
  }
  const { hash: recomputed, content } = eventDigests(head?.hash ?? GENESIS_HASH, event);
  if (recomputed !== event.hash) {
    problem({
      kind: 'hash_mismatch',
      ...at,
      detail: `version ${event.streamVersion} (${event.type}, ${event.eventId}): stored hash ${event.hash.slice(0, 12)}…, recomputed ${recomputed.slice(0, 12)}… — the event or its predecessor was altered or reordered`,
    });
  }
  return { ...next, content };
}

// ---------------------------------------------------------------------------------------
// Feed index columns

/**
 * Recomputes one event's feed columns (given its stored metadata and columns) and reports
 * each that differs from the stored one. The data is upcast first: aggregate index
 * functions read the current shape, and an upcaster keeps an event's meaning (its ids), so
 * the current index of the upcast data is what the append computed on the data as it was
 * then. Returns whether the event could be checked.
 */
export function checkFeedIndex(
  event: ChainEvent,
  metadata: EventMetadata,
  columns: FeedColumns,
  feedIndex: FeedIndexOf,
  problem: (p: Problem) => void,
): boolean {
  let recomputed: FeedColumns | undefined;
  try {
    recomputed = feedIndex(event.type, upcast(event.type, event.schemaVersion, event.data).data, metadata);
  } catch (error) {
    problem({ kind: 'index_unchecked', ...eventAt(event), detail: `${eventWhat(event)}: its feed index cannot be recomputed (${error instanceof Error ? error.message : String(error)})` });
    return false;
  }
  if (!recomputed) {
    problem({ kind: 'index_unchecked', ...eventAt(event), detail: `${eventWhat(event)}: no aggregate defines ${event.type}, so its feed index cannot be recomputed` });
    return false;
  }
  for (const column of FEED_COLUMNS) {
    const stored = columns[column];
    if (stored === recomputed[column]) continue;
    problem({
      kind: 'index_mismatch',
      ...eventAt(event),
      column,
      stored,
      recomputed: recomputed[column],
      detail: `${eventWhat(event)}: ${column} is ${JSON.stringify(stored)}, its data and metadata give ${JSON.stringify(recomputed[column])} — the column was altered`,
    });
  }
  return true;
}

// Outside checkFeedIndex: two closures made per event cost more than the comparisons they serve.
const eventAt = (event: ChainEvent) => ({ streamId: event.streamId, position: event.globalPosition });
const eventWhat = (event: ChainEvent) => `version ${event.streamVersion} (${event.type}, ${event.eventId})`;

// ---------------------------------------------------------------------------------------
// Seals

export interface LeafEvent extends LeafFields {
  transactionId: string;
  /** The event's content digest, when already computed (checkChainLink). */
  content?: string;
}

/**
 * Walks events in gap-free order alongside the seals in chain order (pulled one at a time),
 * recomputing each seal's count and Merkle root over the events now in its range, and the
 * seal chain.
 */
export class SealChecker {
  sealsChecked = 0;
  sealedEvents = 0;
  /** Events seen after the last seal. */
  tailEvents = 0;
  lastSealHash = GENESIS_HASH;
  /** Partial files: seals not wholly inside the file (their own hash and chain are still checked). */
  sealsSkipped = 0;
  /** No seal is left to check. */
  exhausted = false;
  private current: SealRecord | undefined;
  private previous: SealRecord | undefined;
  private builder = new MerkleBuilder();
  private lastEvent: Checkpoint | undefined;
  private skippedUntil: Checkpoint | undefined;

  constructor(
    private readonly nextSeal: () => Promise<SealRecord | undefined>,
    private readonly problem: (p: Problem) => void,
    /** Export files: the file may start after the log's start and end inside a seal. */
    private readonly partial = false,
  ) {}

  /**
   * push without a promise for an event inside the open seal's range (of a whole log): verify
   * and import push every event, and an await each costs more than the check. Answers false,
   * having done nothing, when push must be awaited instead.
   */
  tryPush(event: LeafEvent): boolean {
    const seal = this.current;
    if (this.partial || !seal || this.skippedUntil) return false;
    const at: Checkpoint = { transactionId: event.transactionId, globalPosition: event.globalPosition };
    if (compareCheckpoints(at, sealStart(seal)) < 0 || compareCheckpoints(at, sealEnd(seal)) > 0) return false;
    this.lastEvent = at;
    this.builder.add(event, event.content);
    return true;
  }

  async push(event: LeafEvent): Promise<void> {
    const at: Checkpoint = { transactionId: event.transactionId, globalPosition: event.globalPosition };
    if (this.partial && !this.lastEvent) {
      // A partial file: seals starting before its first event cannot be recomputed.
      for (;;) {
        if (!this.current) {
          const seal = await this.nextSeal();
          if (!seal) {
            this.exhausted = true;
            break;
          }
          this.begin(seal);
        }
        if (compareCheckpoints(sealStart(this.current!), at) >= 0) break;
        this.skip();
      }
    }
    this.lastEvent = at;
    // Inside the range of a seal skipped at the start of a partial file.
    if (this.skippedUntil && compareCheckpoints(at, this.skippedUntil) <= 0) return;
    for (;;) {
      if (!this.current) {
        if (this.exhausted) {
          this.tailEvents += 1;
          return;
        }
        const seal = await this.nextSeal();
        if (!seal) {
          this.exhausted = true;
          continue;
        }
        this.begin(seal);
      }
      const seal = this.current!;
      if (compareCheckpoints(at, sealStart(seal)) < 0) {
        if (this.previous || !this.partial) {
          this.problem({
            kind: 'unsealed_event',
            streamId: event.streamId,
            position: event.globalPosition,
            sealId: idOf(seal),
            detail: this.previous
              ? `event at (${at.transactionId}, ${at.globalPosition}) lies between seal ${idOf(this.previous)} and seal ${idOf(seal)}: inserted after sealing`
              : `event at (${at.transactionId}, ${at.globalPosition}) lies before the first seal: inserted after sealing`,
          });
        }
        return;
      }
      if (compareCheckpoints(at, sealEnd(seal)) <= 0) {
        this.builder.add(event, event.content);
        return;
      }
      this.finish();
    }
  }

  /** Call after the last event: finishes the open seal and any seal left without events. */
  async end(): Promise<void> {
    if (this.current) {
      // A partial file may end inside this seal's range.
      if (this.partial && (!this.lastEvent || compareCheckpoints(this.lastEvent, sealEnd(this.current)) < 0)) this.skip();
      else this.finish();
    }
    while (!this.exhausted) {
      const seal = await this.nextSeal();
      if (!seal) {
        this.exhausted = true;
        break;
      }
      this.begin(seal);
      if (this.partial) this.skip(); // a seal beyond the end of the file
      else this.finish();
    }
  }

  private skip() {
    this.sealsSkipped += 1;
    this.skippedUntil = sealEnd(this.current!);
    this.previous = this.current;
    this.current = undefined;
  }

  private begin(seal: SealRecord) {
    const at = { position: seal.first_position, sealId: idOf(seal) };
    if (this.previous && compareCheckpoints(sealStart(seal), sealEnd(this.previous)) <= 0) {
      this.problem({ kind: 'seal_out_of_order', ...at, detail: `seal ${idOf(seal)} starts at or before the end of seal ${idOf(this.previous)}` });
    }
    if (compareCheckpoints(sealStart(seal), sealEnd(seal)) > 0) {
      this.problem({ kind: 'seal_out_of_order', ...at, detail: `seal ${idOf(seal)} ends before it starts` });
    }
    const expectedPrevious = this.previous?.seal_hash ?? (this.partial ? seal.previous_seal_hash : GENESIS_HASH);
    if (seal.previous_seal_hash !== expectedPrevious) {
      this.problem({
        kind: 'seal_chain_broken',
        ...at,
        detail: this.previous
          ? `seal ${idOf(seal)} does not chain to seal ${idOf(this.previous)}: a seal was removed or replaced`
          : `the first seal does not start the chain: an earlier seal was removed`,
      });
    }
    if (sealHash(seal) !== seal.seal_hash) {
      this.problem({ kind: 'seal_hash_mismatch', ...at, detail: `seal ${idOf(seal)}'s fields do not give its seal_hash: the seal was altered` });
    }
    this.current = seal;
    this.builder = new MerkleBuilder();
  }

  private finish() {
    const seal = this.current!;
    const count = this.builder.count;
    const root = this.builder.root();
    if (count !== seal.event_count || root !== seal.merkle_root) {
      this.problem({
        kind: 'seal_mismatch',
        position: seal.first_position,
        sealId: idOf(seal),
        detail:
          `seal ${idOf(seal)} over positions ${seal.first_position}–${seal.last_position}: ` +
          (count !== seal.event_count
            ? `${count} events now in its range, ${seal.event_count} sealed (events removed or inserted)`
            : `the Merkle root differs (an event altered, replaced or reordered)`),
      });
    }
    this.sealsChecked += 1;
    this.sealedEvents += count;
    this.lastSealHash = seal.seal_hash;
    this.previous = seal;
    this.current = undefined;
  }
}

const idOf = (seal: SealRecord) => (seal.id === undefined ? `at ${seal.first_position}` : String(seal.id));

// ---------------------------------------------------------------------------------------
// The database

/**
 * Verifies the whole log: every stream's chain (contiguous versions from 1, hashes
 * recomputed from GENESIS_HASH), with `feedIndex` every event's feed index columns, and
 * every seal (chain, own hash, count and Merkle root of the events now in its range,
 * nothing between seals), the log tree and its heads. Reads in pages; runs alongside
 * writers (the log only grows; events appended meanwhile may or may not be counted).
 *
 * One pass in gap-free order: each event is serialised and hashed once, for its chain link
 * and its seal leaf. An event's link needs its predecessor in its stream (the stored row of
 * the greatest version below its own): the head this pass last saw of the stream when that
 * is the version just below (a bounded cache), else looked up by the stream's unique index,
 * one statement per page for the page's misses. The next page is read while one is checked.
 * Chain, feed index and named-object problems are listed first, in stream order (stream id,
 * then version), then those of the seals and the tree, then the objects'; past maxProblems of
 * a kind, the first found (in gap-free order) are the ones listed.
 */
export async function verifyLog(db: Kysely<Database>, options: VerifyOptions = {}): Promise<VerifyReport> {
  const pageSize = options.pageSize ?? 2000;
  const maxProblems = options.maxProblems ?? 1000;
  const report = emptyReport();
  report.signaturesChecked = options.publicKey !== undefined;
  const progress = (phase: VerifyProgress['phase']) =>
    options.onProgress?.({
      phase,
      streamsChecked: report.streamsChecked,
      eventsChecked: report.eventsChecked,
      sealsChecked: report.sealsChecked,
      objectsChecked: report.objectsChecked,
    });
  const found = (list: Problem[]) => (p: Problem) => {
    report.ok = false;
    report.problemCount += 1;
    if (list.length < maxProblems) list.push(p);
  };
  // Chain problems with their sort key (stream, version, then the order found).
  const chainProblems: { streamId: string; version: number; problem: Problem }[] = [];
  // The sort key of the chain problems found now (two variables, not an object per event).
  let chainStream = '';
  let chainVersion = 0;
  const chainProblem = (p: Problem) => {
    report.ok = false;
    report.problemCount += 1;
    if (chainProblems.length < maxProblems) chainProblems.push({ streamId: chainStream, version: chainVersion, problem: p });
  };
  const sealProblems: Problem[] = [];

  let sealCursor = 0;
  let sealPage: SealRecord[] = [];
  const nextSeal = async (): Promise<SealRecord | undefined> => {
    if (sealPage.length === 0) {
      sealPage = await db.selectFrom('event_seals').selectAll().where('id', '>', sealCursor).orderBy('id').limit(pageSize).execute();
      const last = sealPage.at(-1);
      if (last) sealCursor = Number(last.id);
    }
    return sealPage.shift();
  };
  const seals = new SealChecker(nextSeal, found(sealProblems));
  // The log tree is recomputed over every event, the unsealed tail included (a kept head may reach into it).
  const tree = new TreeChecker(db, found(sealProblems), { ...(options.keptHead && { keptHead: options.keptHead }), ...(options.publicKey && { publicKey: options.publicKey }) });
  await tree.begin();
  const heads = new StreamHeads();
  const page = (after: Checkpoint) => readPage(db, after, pageSize);
  let next = page(LOG_START);
  for (;;) {
    const rows = await next;
    const last = rows.at(-1);
    const more = last !== undefined && rows.length === pageSize;
    if (more) next = page({ transactionId: last.transaction_id, globalPosition: last.global_position });
    const previous = await heads.predecessors(db, rows);
    const events: LeafEvent[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const event: LeafEvent = leafFieldsOfRow(row);
      events.push(event);
      chainStream = row.stream_id;
      chainVersion = row.stream_version;
      const before = previous[i];
      if (!before) report.streamsChecked += 1;
      const link = checkChainLink(before, event, chainProblem);
      heads.saw(row.stream_id, link);
      report.eventsChecked += 1;
      if (options.feedIndex && checkFeedIndex(event, row.metadata, row, options.feedIndex, chainProblem)) report.indexesChecked += 1;
      if (link.content !== undefined) event.content = link.content;
      if (!seals.tryPush(event)) await seals.push(event);
      if (!tree.tryPush(event)) await tree.push(event);
    }
    if (options.objects) {
      const versions = new Map(rows.map((row) => [row.global_position, row]));
      await options.objects.named(events, (p) => {
        const row = p.position === undefined ? undefined : versions.get(p.position);
        chainStream = row?.stream_id ?? p.streamId ?? '';
        chainVersion = row?.stream_version ?? 0;
        chainProblem(p);
      });
    }
    report.sealsChecked = seals.sealsChecked;
    progress('streams');
    if (!more) break;
  }
  await seals.end();
  await tree.end();
  report.treeSize = tree.storedSize;
  report.headsChecked = tree.headsChecked;
  report.keptHeadSize = options.keptHead?.treeSize ?? null;
  report.sealsChecked = seals.sealsChecked;
  report.sealedEvents = seals.sealedEvents;
  report.lastSealHash = seals.lastSealHash;

  // The tail after the last seal is only counted.
  const tail = await lastSealEnd(db);
  const { count } = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where(afterCheckpoint(tail))
    .executeTakeFirstOrThrow();
  report.unsealedEvents = Number(count);
  // Sorted stably: the problems of one event stay in the order found.
  chainProblems.sort((a, b) => (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : a.version - b.version));
  report.problems = [...chainProblems.map((c) => c.problem), ...sealProblems].slice(0, maxProblems);
  progress('seals');

  // The objects the log names by hash.
  if (options.objects) {
    report.objectsChecked = await options.objects.store(reporter(report, maxProblems), (checked) => {
      report.objectsChecked = checked;
      progress('objects');
    });
  }
  return report;
}

/**
 * A page of stored rows in gap-free order, as `selectAll` gives them, each read as one JSON
 * text: PGlite decodes every field of a row on its own, and one text per row takes 30% off
 * verify's CPU there (node-postgres reads it at about the same cost; the server spends a few
 * µs a row more, beside the reader). Positions and transaction ids as text (a JSON number
 * would round past 2^53); occurred_at as whole milliseconds since the epoch, what a Date
 * keeps of the timestamp (the drivers drop the microseconds too), in integer arithmetic
 * (before PostgreSQL 14 extract() answers a float).
 */
async function readPage(db: Kysely<Database>, after: Checkpoint, limit: number): Promise<Selectable<EventsTable>[]> {
  const { rows } = await sql<{ row: string }>`
    select json_build_object('global_position', global_position::text, 'transaction_id', transaction_id::text, 'stream_id', stream_id,
                             'stream_version', stream_version, 'event_id', event_id, 'event_type', event_type, 'schema_version', schema_version,
                             'data', data, 'metadata', metadata, 'actor_id', actor_id, 'project_id', project_id, 'group_id', group_id,
                             'target_type', target_type, 'target_id', target_id, 'hash', hash,
                             'occurred_at', extract(epoch from date_trunc('second', occurred_at))::bigint * 1000
                                            + (extract(microseconds from occurred_at)::bigint % 1000000) / 1000)::text as row
      from events where ${afterCheckpoint(after)} order by transaction_id, global_position limit ${limit}`.execute(db);
  return rows.map(({ row }) => {
    const parsed = JSON.parse(row) as Omit<Selectable<EventsTable>, 'occurred_at'> & { occurred_at: number | Date };
    parsed.occurred_at = new Date(parsed.occurred_at);
    return parsed as Selectable<EventsTable>;
  });
}

/**
 * Each event's predecessor in its stream (the stored row of the greatest version below its
 * own), for the gap-free pass: the last row seen of the stream when it is the version just
 * below, else read from the stream index. At most LIMIT streams are remembered (the least
 * recently seen forgotten first), so memory stays flat however many streams the log holds.
 */
class StreamHeads {
  private static readonly LIMIT = 100_000;
  private readonly seen = new Map<string, StreamHead>();

  saw(streamId: string, head: StreamHead) {
    this.seen.delete(streamId);
    this.seen.set(streamId, { version: head.version, hash: head.hash });
    if (this.seen.size > StreamHeads.LIMIT) this.seen.delete(this.seen.keys().next().value!);
  }

  async predecessors(db: Kysely<Database>, rows: readonly { stream_id: string; stream_version: number; hash: string }[]): Promise<(StreamHead | undefined)[]> {
    const found: (StreamHead | undefined)[] = new Array(rows.length);
    const misses: number[] = [];
    // Rows of one page may follow each other in a stream: a row is a hit when the version
    // just below it was seen before it, on an earlier page or this one.
    const inPage = new Map<string, number>();
    for (const [i, row] of rows.entries()) {
      const before = inPage.get(row.stream_id);
      const seen = before === undefined ? this.seen.get(row.stream_id) : { version: rows[before]!.stream_version, hash: rows[before]!.hash };
      if (seen && seen.version === row.stream_version - 1) found[i] = seen;
      else misses.push(i);
      inPage.set(row.stream_id, i);
    }
    if (misses.length > 0) {
      const { rows: read } = await sql<{ i: number; version: number | null; hash: string | null }>`
        select m.i, p.stream_version as version, p.hash
          from unnest(${misses}::integer[], ${misses.map((i) => rows[i]!.stream_id)}::text[], ${misses.map((i) => rows[i]!.stream_version)}::integer[]) as m(i, stream_id, version)
          left join lateral (select stream_version, hash from events e where e.stream_id = m.stream_id and e.stream_version < m.version
                              order by e.stream_version desc limit 1) p on true`.execute(db);
      for (const row of read) if (row.version !== null && row.hash !== null) found[row.i] = { version: row.version, hash: row.hash };
    }
    return found;
  }
}

async function lastSealEnd(db: Kysely<Database>): Promise<Checkpoint> {
  const last = await db.selectFrom('event_seals').select(['last_transaction_id', 'last_position']).orderBy('id', 'desc').limit(1).executeTakeFirst();
  return last ? { transactionId: last.last_transaction_id, globalPosition: last.last_position } : LOG_START;
}
