import { createHash, type KeyObject } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { CopyRows, copyField, copyInto } from '../database/copy.js';
import type { Database } from '../database/database.js';
import {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  asExportedEvent,
  chainEventOf,
  emptyBundleCounts,
  isBundleRecord,
  type BundleCounts,
  type BundleGitObject,
  type BundleUpload,
  type ExportedEvent,
} from './export.js';
import type { FeedIndexOf } from './feed-index.js';
import { leafOfEventHash } from './log-tree.js';
import { EMPTY_ROOT, TreeBuilder, type StoredNode } from './merkle-tree.js';
import { FIRST_NORMAL_XID, advanceTransactionIds } from './rebase.js';
import { SEAL_LOCK, sealEnd, type SealRecord } from './seal.js';
import { parseTreeHeadJson, verifyTreeHead, type TreeHead } from './tree-heads.js';
import { compareCheckpoints, type Checkpoint } from './types.js';
import { SealChecker, checkChainLink, checkFeedIndex, type LeafEvent, type ObjectStoreCheck, type Problem, type StreamHead } from './verify.js';

/**
 * `forgelog events import FILE`: a bundle (`events export --bundle`, export.ts) into an empty
 * database, verified as it is read, in one transaction — the first bad line stops it and
 * nothing of it stays.
 *
 * As each line is read:
 * - an event: in gap-free order after the one before; its stream's next version, its hash
 *   recomputed on the stream's chain; its feed index columns recomputed (and its data
 *   upcast and checked against its type's schema on the way); counted into the seal whose
 *   range it falls in (each seal's count, Merkle root and chain checked as it closes); a leaf
 *   of the recomputed log tree, whose root must be every carried signed head's root when the
 *   tree reaches its size (and, given the log's public key, every head's signature must be
 *   the key's); every upload it names carried, every git object it names stored;
 * - an upload or a git object: its content hashed again (SHA-256; git's SHA-1 of
 *   `<type> <size>\0<content>`) and compared with its name;
 * - the end record: the counts of every kind read, so a cut file is refused.
 * After the last line: every seal and head consumed, every claim held by a stream of the log,
 * every git object's references stored (the same check as `events verify`).
 *
 * Order. Transaction ids are no part of any hash, but they define the gap-free order
 * (transaction_id, global_position) that readers, seals and the tree follow, and which events
 * were committed together (the activity feeds hide an event committed with its resource's
 * creation). Positions are kept exactly (seals and leaves cover them, audit events are named
 * by them). Transaction ids are kept too when they are all below this transaction's own id
 * (a bundle of this cluster, or of one that has written less); otherwise each of the file's
 * transactions gets the next id from BASE up, in the file's order — one id per transaction,
 * so both the order and which events share a transaction are kept. Either way every id is
 * below this transaction's own, hence below every later snapshot's xmin: gap-free readers see
 * the log once this commits, and every later append sorts after it. When BASE + the file's
 * transaction count does not fit below it (a young cluster), transaction ids are consumed
 * first (rebase.ts's advanceTransactionIds), before the import's transaction begins.
 *
 * After the import: seals, the log tree (over the sealed events, as the sealer left it),
 * signed heads, claims and sequences are the source's; reactors' checkpoints sit at the
 * log's end (nothing the imported history would trigger happens again: no webhook, delivery,
 * todo or email); projections have no checkpoint, so `forgelog rebuild --all` (or the
 * worker, on start) rebuilds every read table from the log.
 */

const EVENT_COLUMNS = [
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

/** Where renumbered transaction ids start, as rebase.ts's. */
const BASE = FIRST_NORMAL_XID;

export type ImportProblemKind =
  | Problem['kind']
  | 'not_a_bundle'
  | 'out_of_place'
  | 'duplicate'
  | 'upload_mismatch'
  | 'upload_missing'
  | 'unknown_sequence'
  | 'claim_orphaned'
  | 'count_mismatch'
  | 'truncated'
  | 'refused_by_database';

export interface ImportRefusal {
  kind: ImportProblemKind;
  /** The file's line (1-based); null for a check made after the last line. */
  line: number | null;
  /** The event's global position, when the line is (or names) an event. */
  position?: string;
  streamId?: string;
  detail: string;
}

/** The import stopped: nothing was written. */
export class ImportRefused extends Error {
  constructor(readonly refusal: ImportRefusal) {
    super(`${refusal.line === null ? 'after the last line' : `line ${refusal.line}`}${refusal.position ? ` (position ${refusal.position})` : ''}: ${refusal.detail}`);
  }
}

/** The target already holds a log: an import only goes into an empty database. */
export class ImportTargetNotEmpty extends Error {}

/** What a bundle carries beside the log, stored by the areas that own it (src/projections/bundle-content.ts). */
export interface BundleContentSink {
  storeUploads(trx: Kysely<Database>, uploads: readonly BundleUpload[]): Promise<void>;
  storeGitObjects(trx: Kysely<Database>, objects: readonly BundleGitObject[]): Promise<void>;
  /** The objects events name (`named`), then the store itself (`store`): verify's check. */
  check(trx: Kysely<Database>): ObjectStoreCheck;
  /** After the last line: what is derived from the stored content (the commit graph). */
  finish(trx: Kysely<Database>): Promise<void>;
}

export interface ImportOptions {
  /** Recomputes each event's feed index columns (without it they are taken as they come). */
  feedIndex?: FeedIndexOf;
  /** The log key's public half: every carried head's signature is checked (without it, their roots only). */
  publicKey?: KeyObject;
  /** Where uploads and git objects go; a bundle carrying any needs it. */
  content?: BundleContentSink;
  /** Reactors whose checkpoints start at the imported log's end. */
  reactors?: readonly string[];
  /** Events per INSERT (default 2000). */
  batchSize?: number;
  onProgress?: (progress: { lines: number; events: number }) => void;
}

export interface ImportReport {
  counts: BundleCounts;
  streams: number;
  /** Events whose feed index columns were recomputed. */
  indexesChecked: number;
  sealsChecked: number;
  /** Leaves of the log tree written (the sealed events). */
  treeSize: number;
  headsChecked: number;
  signaturesChecked: boolean;
  /** Distinct transaction ids the imported log uses (as many as the file's transactions). */
  transactionIds: number;
  /** The file's transaction ids were kept (all below this cluster's); otherwise renumbered from 3. */
  transactionIdsKept: boolean;
  lastPosition: string | null;
  /** Transaction ids consumed to make room (a young cluster). */
  advanced: number;
  milliseconds: number;
}

class NoRoom extends Error {
  constructor(readonly needed: bigint) {
    super(`the import needs ${needed} more transaction ids`);
  }
}

/**
 * Imports a bundle into an empty database. `open` gives the file's lines (from the start,
 * streamed; it is called again if the file must be read twice). Throws ImportRefused (the
 * first bad line) or ImportTargetNotEmpty; either way nothing is written.
 */
export async function importBundle(db: Kysely<Database>, open: () => AsyncIterable<string>, options: ImportOptions = {}): Promise<ImportReport> {
  const started = performance.now();
  let advanced = 0;
  const span = await headerSpan(open);
  if (span && BigInt(span.maxTransactionId) >= (await nextTransactionId(db))) {
    // The file's ids do not fit below this cluster's: they are renumbered from BASE, which
    // must fit below the import's own id.
    const room = (await nextTransactionId(db)) - BASE;
    if (BigInt(span.transactions) + 1n >= room) {
      const count = Number(BigInt(span.transactions) + 1n - room) + 100;
      await advanceTransactionIds(db, count);
      advanced += count;
    }
  }
  for (let attempt = 0; ; attempt++) {
    try {
      const report = await db.transaction().execute((trx) => new Importer(trx, options).run(open()));
      return { ...report, advanced, milliseconds: Math.round(performance.now() - started) };
    } catch (error) {
      if (!(error instanceof NoRoom) || attempt > 0) throw error;
      const count = Number(error.needed) + 100;
      await advanceTransactionIds(db, count);
      advanced += count;
    }
  }
}

/** The header's transaction span, read before the import's transaction (undefined when the file does not start with a header: the import refuses it). */
async function headerSpan(open: () => AsyncIterable<string>): Promise<{ transactions: number; maxTransactionId: string } | undefined> {
  for await (const line of open()) {
    try {
      const header = JSON.parse(line) as { transactions?: unknown; max_transaction_id?: unknown };
      if (Number.isSafeInteger(header.transactions) && typeof header.max_transaction_id === 'string' && /^\d+$/.test(header.max_transaction_id)) {
        return { transactions: header.transactions as number, maxTransactionId: header.max_transaction_id };
      }
    } catch {
      // the import names what is wrong with the first line
    }
    return undefined;
  }
  return undefined;
}

/** The id the cluster's next transaction will take (at least). */
async function nextTransactionId(db: Kysely<Database>): Promise<bigint> {
  const { rows } = await sql<{ next: string }>`select pg_snapshot_xmax(pg_current_snapshot())::text as next`.execute(db);
  return BigInt(rows[0]!.next);
}

interface PendingEvent {
  line: number;
  event: ExportedEvent;
  transactionId: string;
  /** The log tree's leaf and the nodes it completed, for a sealed event (the stored tree covers those). */
  treeNodes: StoredNode[] | undefined;
}

type Phase = 'header' | 'content' | 'events' | 'after' | 'ended';
const PHASES: readonly Phase[] = ['header', 'content', 'events', 'after', 'ended'];
const PHASE_OF: Record<string, Phase> = {
  bundle: 'header',
  upload: 'content',
  git_object: 'content',
  tree_head: 'content',
  seal: 'content',
  sequence: 'after',
  claim: 'after',
  end: 'ended',
};

class Importer {
  private readonly batchSize: number;
  private readonly counts = emptyBundleCounts();
  private readonly streamHeads = new Map<string, StreamHead>();
  private readonly uploads = new Set<string>();
  private readonly seals: (SealRecord & { created_at?: string })[] = [];
  private readonly heads: TreeHead[] = [];
  private headIndex = 0;
  private headsChecked = 0;
  private readonly tree = new TreeBuilder();
  private treeStored = 0;
  private sealChecker: SealChecker | undefined;
  /** The last sealed event (the end of the last seal), in the file's ids. */
  private sealedUntil: Checkpoint | undefined;
  /** Seal bounds (positions) whose new transaction ids the seal rows need. */
  private readonly boundTx = new Map<string, string | undefined>();
  private pending: PendingEvent[] = [];
  private pendingUploads: BundleUpload[] = [];
  private pendingObjects: BundleGitObject[] = [];
  private pendingClaims: { kind: string; key: string; stream_id: string }[] = [];
  private previous: Checkpoint | undefined;
  private lastPosition: string | null = null;
  private indexesChecked = 0;
  private phase: Phase = 'header';
  private line = 0;
  private ownTransaction = 0n;
  private maxSequencePosition = 0n;
  /** What the header says of the file's transactions (checked against the events at the end). */
  private declared = { transactions: 0, max: '0' };
  private keepIds = true;
  /** The file's transactions seen, the newest id among them, and the new id of the last one. */
  private transactions = 0;
  private maxSeen = 0n;
  private transactionId = '0';

  constructor(
    private readonly trx: Kysely<Database>,
    private readonly options: ImportOptions,
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 2000);
  }

  async run(lines: AsyncIterable<string>): Promise<Omit<ImportReport, 'advanced' | 'milliseconds'>> {
    await this.prepare();
    try {
      return await this.read(lines);
    } catch (error) {
      // A batch still being written may have been refused first: its line comes before this one.
      const earlier = await this.inflight.then(
        () => undefined,
        (e: unknown) => e,
      );
      throw earlier instanceof ImportRefused ? earlier : error;
    }
  }

  private async read(lines: AsyncIterable<string>): Promise<Omit<ImportReport, 'advanced' | 'milliseconds'>> {
    let ended = false;
    for await (const text of lines) {
      this.line += 1;
      if (text.trim() === '') continue;
      if (ended) this.refuse({ kind: 'out_of_place', detail: 'a line after the end record' });
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        this.refuse({ kind: 'malformed_line', detail: 'not JSON' });
      }
      if (this.line === 1 || this.phase === 'header') {
        this.header(value);
        continue;
      }
      if (isBundleRecord(value)) ended = await this.record(value);
      else await this.eventLine(value);
      if (this.line % 10_000 === 0) this.options.onProgress?.({ lines: this.line, events: this.counts.events });
    }
    if (this.phase === 'header') this.refuse({ kind: 'not_a_bundle', detail: 'the file is empty' });
    if (!ended) this.refuse({ kind: 'truncated', line: null, detail: `the file ends at line ${this.line} without its end record: it was cut short` });
    return this.finish();
  }

  // ─────────────────────────── before the first line ───────────────────────────

  private async prepare() {
    const trx = this.trx;
    // Nobody appends, seals or projects while the log is written; the per-stream order
    // trigger's lookup is the import's own check (versions in order, gap-free order kept),
    // so it is off for these inserts — inside this transaction only (DDL is transactional).
    await sql`lock table events, event_seals, log_tree_leaves, log_tree_nodes, log_tree_heads, claims, projection_checkpoints in exclusive mode`.execute(trx);
    await sql`select ${SEAL_LOCK}`.execute(trx);
    const { rows } = await sql<{ events: string; seals: string; leaves: string; heads: string; claims: string; own: string }>`
      select (select count(*) from events)::text as events, (select count(*) from event_seals)::text as seals,
             (select count(*) from log_tree_leaves)::text as leaves, (select count(*) from log_tree_heads)::text as heads,
             (select count(*) from claims)::text as claims, pg_current_xact_id()::text as own`.execute(trx);
    const found = rows[0]!;
    const held = (['events', 'seals', 'leaves', 'heads', 'claims'] as const).filter((k) => found[k] !== '0');
    if (held.length > 0) {
      throw new ImportTargetNotEmpty(
        `the database is not empty (${held.map((k) => `${found[k]} ${k === 'leaves' ? 'log tree leaves' : k}`).join(', ')}): import only into a new, migrated database`,
      );
    }
    this.ownTransaction = BigInt(found.own);
    await sql`alter table events disable trigger events_stream_order`.execute(trx);
    // The feed and order indexes are built once over the loaded rows (as rebuild.ts does),
    // cheaper than keeping each up to date row by row; the constraints' indexes stay (a
    // repeated event id or position is refused as it is inserted).
    const { rows: indexes } = await sql<{ name: string; definition: string }>`
      select format('%I', indexname) as name, indexdef as definition from pg_indexes
       where schemaname = 'public' and tablename = 'events'
         and indexname not in (select conname from pg_constraint where conrelid = 'public.events'::regclass)`.execute(trx);
    for (const index of indexes) await sql.raw(`drop index public.${index.name}`).execute(trx);
    this.deferredIndexes = indexes.map((index) => index.definition);
  }

  private deferredIndexes: string[] = [];

  private header(value: unknown) {
    const header = value as { record?: unknown; format?: unknown; version?: unknown } | undefined;
    if (!isBundleRecord(value) || header?.record !== 'bundle' || header.format !== BUNDLE_FORMAT) {
      this.refuse({
        kind: 'not_a_bundle',
        detail: 'the first line is not a bundle header: import takes a file of `forgelog events export --bundle` (a plain export holds the events only, not the sequences, claims, seals and content an instance needs)',
      });
    }
    if (header.version !== BUNDLE_VERSION) this.refuse({ kind: 'not_a_bundle', detail: `bundle version ${JSON.stringify(header.version)}; this forgelog reads version ${BUNDLE_VERSION}` });
    const span = value as { transactions?: unknown; max_transaction_id?: unknown };
    if (!Number.isSafeInteger(span.transactions) || !(span.max_transaction_id === null || (typeof span.max_transaction_id === 'string' && /^\d+$/.test(span.max_transaction_id)))) {
      this.refuse({ kind: 'not_a_bundle', detail: 'the bundle header needs transactions (a count) and max_transaction_id' });
    }
    this.declared = { transactions: span.transactions as number, max: (span.max_transaction_id as string | null) ?? '0' };
    // Kept as they are when all fit below this transaction; renumbered from BASE otherwise.
    this.keepIds = BigInt(this.declared.max) < this.ownTransaction;
    this.phase = 'content';
  }

  // ─────────────────────────── records ───────────────────────────

  /** Answers whether it was the end record. */
  private async record(value: { record: string } & Record<string, unknown>): Promise<boolean> {
    const phase = PHASE_OF[value.record];
    if (!phase || phase === 'header') this.refuse({ kind: 'malformed_line', detail: `unknown record ${JSON.stringify(value.record)}` });
    await this.enter(phase, `a ${value.record} record`);
    switch (value.record) {
      case 'upload':
        await this.upload(value);
        return false;
      case 'git_object':
        await this.gitObject(value);
        return false;
      case 'tree_head':
        this.treeHead(value);
        return false;
      case 'seal':
        this.seal(value);
        return false;
      case 'sequence':
        await this.sequence(value);
        return false;
      case 'claim':
        await this.claim(value);
        return false;
      default:
        await this.end(value);
        return true;
    }
  }

  /**
   * Records come in the bundle's order: content, events, sequences and claims, end. Leaving
   * the content, the events begin (seals and heads are all known); leaving the events, what
   * is pending is written and the seals and heads must all have been reached.
   */
  private async enter(phase: Phase, what: string) {
    const from = PHASES.indexOf(this.phase);
    const to = PHASES.indexOf(phase);
    if (to < from) {
      this.refuse({ kind: 'out_of_place', detail: `${what} after the ${this.phase === 'after' ? 'sequences and claims' : this.phase}: a bundle holds content, heads and seals, then the events, then sequences and claims` });
    }
    const content = PHASES.indexOf('content');
    const events = PHASES.indexOf('events');
    if (from <= content && to > content) {
      await this.flushContent();
      this.beginEvents();
    }
    if (from <= events && to > events) await this.endEvents();
    this.phase = phase;
  }

  private async upload(value: Record<string, unknown>) {
    const sha256 = value.sha256;
    const content = base64(value.content);
    if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256) || !content) this.refuse({ kind: 'malformed_line', detail: 'an upload record needs sha256 (64 hex digits) and content (base64)' });
    const digest = createHash('sha256').update(content).digest('hex');
    if (digest !== sha256) this.refuse({ kind: 'upload_mismatch', detail: `upload ${sha256}: its content's SHA-256 is ${digest}` });
    if (this.uploads.has(sha256)) this.refuse({ kind: 'duplicate', detail: `upload ${sha256} again` });
    this.uploads.add(sha256);
    this.pendingUploads.push({ sha256, content });
    this.counts.uploads += 1;
    if (this.pendingUploads.length >= 100) await this.flushContent();
  }

  private async gitObject(value: Record<string, unknown>) {
    const { project_id: projectId, sha, type } = value;
    const content = base64(value.content);
    if (!Number.isSafeInteger(projectId) || typeof sha !== 'string' || !/^[0-9a-f]{40}$/.test(sha) || !['blob', 'tree', 'commit', 'tag'].includes(type as string) || !content) {
      this.refuse({ kind: 'malformed_line', detail: 'a git_object record needs project_id, sha (40 hex digits), type (blob, tree, commit or tag) and content (base64)' });
    }
    if (!this.options.content) this.refuse({ kind: 'malformed_line', detail: 'the bundle carries git objects, and this import was given nowhere to store them' });
    const digest = createHash('sha1').update(`${type as string} ${content.length}\0`).update(content).digest('hex');
    if (digest !== sha) this.refuse({ kind: 'object_mismatch', detail: `git object ${sha} of project ${projectId as number}: its content hashes to ${digest}` });
    this.pendingObjects.push({ project_id: projectId as number, sha, type: type as string, content });
    this.counts.git_objects += 1;
    if (this.pendingObjects.length >= 200) await this.flushContent();
  }

  private treeHead(value: Record<string, unknown>) {
    let head: TreeHead;
    try {
      const { record: _record, ...json } = value;
      head = parseTreeHeadJson(JSON.stringify(json));
    } catch (error) {
      this.refuse({ kind: 'malformed_line', detail: `a tree_head record: ${(error as Error).message}` });
    }
    const before = this.heads.at(-1);
    if (before && head.treeSize <= before.treeSize) this.refuse({ kind: 'out_of_place', detail: `the head of tree size ${head.treeSize} follows one of ${before.treeSize}: heads come smallest first, one per size` });
    if (this.options.publicKey && !verifyTreeHead(this.options.publicKey, head)) {
      this.refuse({ kind: 'head_signature_invalid', detail: `the head of tree size ${head.treeSize}: its signature is not the log key's over its fields — forged or altered` });
    }
    this.heads.push(head);
    this.counts.tree_heads += 1;
  }

  private seal(value: Record<string, unknown>) {
    const v = value as Partial<Record<keyof SealRecord | 'created_at', unknown>>;
    const digits = (x: unknown) => typeof x === 'string' && /^\d+$/.test(x);
    const hex = (x: unknown) => typeof x === 'string' && /^[0-9a-f]{64}$/.test(x);
    const valid =
      (v.id === undefined || Number.isSafeInteger(v.id)) &&
      digits(v.first_transaction_id) &&
      digits(v.first_position) &&
      digits(v.last_transaction_id) &&
      digits(v.last_position) &&
      Number.isSafeInteger(v.event_count) &&
      hex(v.merkle_root) &&
      hex(v.previous_seal_hash) &&
      hex(v.seal_hash) &&
      (v.created_at === undefined || (typeof v.created_at === 'string' && !Number.isNaN(Date.parse(v.created_at))));
    if (!valid) this.refuse({ kind: 'malformed_line', detail: 'not a seal record (exportSeals shape)' });
    const seal = value as unknown as SealRecord & { created_at?: string };
    this.seals.push(seal);
    this.boundTx.set(seal.first_position, undefined);
    this.boundTx.set(seal.last_position, undefined);
    this.counts.seals += 1;
  }

  private async sequence(value: Record<string, unknown>) {
    const { name, value: last } = value;
    if (typeof name !== 'string' || !/^[a-z_][a-z0-9_]*$/.test(name) || (last !== null && !(typeof last === 'string' && /^-?\d+$/.test(last)))) {
      this.refuse({ kind: 'malformed_line', detail: 'a sequence record needs name and value (a whole number as a string, or null)' });
    }
    const { rows } = await sql<{ found: boolean }>`select exists (select 1 from pg_sequences where schemaname = 'public' and sequencename = ${name}) as found`.execute(this.trx);
    if (!rows[0]?.found) this.refuse({ kind: 'unknown_sequence', detail: `sequence ${name} does not exist here: the bundle comes from a newer forgelog (migrate this database with it first)` });
    if (last !== null) {
      await sql`select setval(${`public.${name}`}::regclass, ${last}::bigint, true)`.execute(this.trx);
      if (name === 'events_global_position_seq') this.maxSequencePosition = BigInt(last);
    }
    this.counts.sequences += 1;
  }

  private async claim(value: Record<string, unknown>) {
    const { kind, key, stream_id: streamId } = value;
    if (typeof kind !== 'string' || typeof key !== 'string' || typeof streamId !== 'string') this.refuse({ kind: 'malformed_line', detail: 'a claim record needs kind, key and stream_id' });
    this.pendingClaims.push({ kind, key, stream_id: streamId });
    this.counts.claims += 1;
    if (this.pendingClaims.length >= 1000) await this.flushClaims();
  }

  private async end(value: Record<string, unknown>) {
    const expected = emptyBundleCounts();
    const differing = (Object.keys(expected) as (keyof BundleCounts)[]).filter((k) => value[k] !== this.counts[k]);
    if (differing.length > 0) {
      this.refuse({
        kind: 'count_mismatch',
        detail: `the end record counts ${differing.map((k) => `${JSON.stringify(value[k])} ${k}`).join(', ')}; the file holds ${differing.map((k) => `${this.counts[k]} ${k}`).join(', ')}: lines were removed or added`,
      });
    }
  }

  // ─────────────────────────── events ───────────────────────────

  private beginEvents() {
    let next = 0;
    this.sealChecker = new SealChecker(async () => this.seals[next++], (p) => this.refuseProblem(p));
    const last = this.seals.at(-1);
    this.sealedUntil = last ? sealEnd(last) : undefined;
    this.checkHeads();
  }

  private async eventLine(value: unknown) {
    if (this.phase !== 'events') await this.enter('events', 'an event');
    const event = asExportedEvent(value);
    if (!event) this.refuse({ kind: 'malformed_line', detail: 'not an exported event (a column is missing or of the wrong type)' });
    const at: Checkpoint = { transactionId: event.transaction_id, globalPosition: event.global_position };
    const here = { position: event.global_position, streamId: event.stream_id };
    if (this.previous && compareCheckpoints(at, this.previous) <= 0) {
      this.refuse({ kind: 'out_of_order', ...here, detail: 'not after the previous event in (transaction_id, global_position) order' });
    }
    if (event.transaction_id !== this.previous?.transactionId) {
      this.transactions += 1;
      const id = BigInt(event.transaction_id);
      if (id > this.maxSeen) this.maxSeen = id;
      if (this.transactions > this.declared.transactions || id > BigInt(this.declared.max)) {
        this.refuse({ kind: 'count_mismatch', ...here, detail: `the bundle header counts ${this.declared.transactions} transactions up to id ${this.declared.max}; this event is of transaction ${event.transaction_id}, the ${this.transactions}th` });
      }
      this.transactionId = this.keepIds ? event.transaction_id : String(BASE + BigInt(this.transactions - 1));
    }
    this.previous = at;
    this.lastPosition = event.global_position;
    const chained: LeafEvent = { ...chainEventOf(event), transactionId: event.transaction_id };
    const link = checkChainLink(this.streamHeads.get(event.stream_id), chained, this.problem);
    this.streamHeads.set(event.stream_id, { version: link.version, hash: link.hash });
    if (this.options.feedIndex) {
      checkFeedIndex(chained, event.metadata, event, this.options.feedIndex, this.problem);
      this.indexesChecked += 1;
    }
    if (link.content !== undefined) chained.content = link.content;
    if (!this.sealChecker!.tryPush(chained)) await this.sealChecker!.push(chained);
    // Sealed events come first in gap-free order, so the stored tree (over the sealed events)
    // is this tree up to the last of them: the nodes their leaves complete are its nodes.
    const sealed = this.sealedUntil !== undefined && compareCheckpoints(at, this.sealedUntil) <= 0;
    const treeNodes = this.tree.push(leafOfEventHash(event.hash));
    this.checkHeads();
    for (const sha256 of uploadsNamedBy(event.data)) {
      if (!this.uploads.has(sha256)) this.refuse({ kind: 'upload_missing', ...here, detail: `${event.event_type} names upload ${sha256}, which the bundle does not carry` });
    }
    const transactionId = this.transactionId;
    if (this.boundTx.has(event.global_position)) this.boundTx.set(event.global_position, transactionId);
    this.pending.push({ line: this.line, event, transactionId, treeNodes: sealed ? treeNodes : undefined });
    this.counts.events += 1;
    if (this.pending.length >= this.batchSize) await this.flushEvents();
  }

  /** Every carried head whose size the recomputed tree has reached must have its root. */
  private checkHeads() {
    for (let head = this.heads[this.headIndex]; head && head.treeSize <= this.tree.size; head = this.heads[++this.headIndex]) {
      const root = head.treeSize === 0 ? EMPTY_ROOT : this.tree.root();
      if (!root.equals(head.rootHash)) {
        this.refuse({
          kind: 'head_mismatch',
          ...(this.lastPosition ? { position: this.lastPosition } : {}),
          detail: `the signed head of tree size ${head.treeSize} has root ${head.rootHash.toString('base64')}; the bundle's first ${head.treeSize} events give ${root.toString('base64')}: events it covers were edited, removed, inserted or reordered`,
        });
      }
      this.headsChecked += 1;
    }
  }

  private async endEvents() {
    await this.flushEvents();
    await this.inflight;
    await this.sealChecker!.end();
    const unreached = this.heads[this.headIndex];
    if (unreached) {
      this.refuse({ kind: 'head_truncated', detail: `a signed head covers ${unreached.treeSize} events; the bundle holds ${this.tree.size}: events were removed` });
    }
    const sealed = this.sealChecker!.sealedEvents;
    const largest = this.heads.at(-1);
    if (largest && largest.treeSize > sealed) {
      this.refuse({ kind: 'tree_mismatch', detail: `a signed head covers ${largest.treeSize} events, more than the ${sealed} the seals cover: the log tree covers the sealed events only` });
    }
  }

  private async flushContent() {
    const content = this.options.content;
    if (this.pendingUploads.length > 0) {
      if (!content) this.refuse({ kind: 'malformed_line', detail: 'the bundle carries uploads, and this import was given nowhere to store them' });
      await this.database(() => content.storeUploads(this.trx, this.pendingUploads), 'uploads');
      this.pendingUploads = [];
    }
    if (this.pendingObjects.length > 0) {
      await this.database(() => this.options.content!.storeGitObjects(this.trx, this.pendingObjects), 'git objects');
      this.pendingObjects = [];
    }
  }

  /**
   * The previous batch's writes, still running while the next batch is read and checked (one
   * batch in flight: the database works while this process hashes). A refusal of its own
   * comes out when it is awaited, before any later line's (run's catch).
   */
  private inflight: Promise<void> = Promise.resolve();

  private async flushEvents() {
    await this.inflight;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.inflight = this.writeEvents(batch);
    this.inflight.catch(() => {}); // awaited by the next flush, or by run's catch
  }

  /**
   * One COPY per table and batch (src/database/copy.ts): the events as checked (their data
   * and metadata re-serialised from what was hashed, not the file's text), the tree's
   * leaves and nodes.
   */
  private async writeEvents(batch: PendingEvent[]) {
    const rows = new CopyRows();
    for (const { event: e, transactionId } of batch) {
      // A data of JSON null is SQL NULL, refused by the column as before.
      const data = e.data === null ? '\\N' : copyField(JSON.stringify(e.data));
      rows.add(`${e.global_position}\t${transactionId}\t${copyField(e.stream_id)}\t${e.stream_version}\t${copyField(e.event_id)}\t${copyField(e.event_type)}\t${e.schema_version}\t${data}\t${copyField(JSON.stringify(e.metadata))}\t${copyField(e.actor_id)}\t${copyField(e.project_id)}\t${copyField(e.group_id)}\t${copyField(e.target_type)}\t${copyField(e.target_id)}\t${copyField(e.occurred_at)}\t${copyField(e.hash)}\n`);
    }
    await this.database(() => copyInto(this.trx, 'events', EVENT_COLUMNS, rows), 'events', batch);
    const check = this.options.content?.check(this.trx);
    if (check) {
      const found: Problem[] = [];
      await check.named(
        batch.map((p) => chainEventOf(p.event)),
        (p) => found.push(p),
      );
      if (found[0]) this.refuseProblem(found[0], batch.find((p) => p.event.global_position === found[0]!.position)?.line);
    }
    const leaves = new CopyRows();
    const nodes = new CopyRows();
    for (const p of batch) {
      for (const node of p.treeNodes ?? []) {
        if (node.level === 0) {
          leaves.add(`${node.index}\t${p.event.global_position}\t\\\\x${node.hash.toString('hex')}\n`);
          this.treeStored += 1;
        } else nodes.add(`${node.level}\t${node.index}\t\\\\x${node.hash.toString('hex')}\n`);
      }
    }
    if (!leaves.empty) await copyInto(this.trx, 'log_tree_leaves', ['leaf_index', 'global_position', 'leaf_hash'], leaves);
    if (!nodes.empty) await copyInto(this.trx, 'log_tree_nodes', ['level', 'node_index', 'hash'], nodes);
  }

  private async flushClaims() {
    const claims = this.pendingClaims;
    if (claims.length === 0) return;
    this.pendingClaims = [];
    await this.database(
      () =>
        sql`insert into claims (kind, key, stream_id)
            select * from unnest(${claims.map((c) => c.kind)}::text[], ${claims.map((c) => c.key)}::text[], ${claims.map((c) => c.stream_id)}::text[])`.execute(this.trx),
      'claims',
    );
  }

  // ─────────────────────────── after the last line ───────────────────────────

  private async finish(): Promise<Omit<ImportReport, 'advanced' | 'milliseconds'>> {
    const trx = this.trx;
    await this.flushClaims();
    // A claim names the stream holding it: that stream must be in the log.
    const { rows: orphans } = await sql<{ kind: string; key: string; stream_id: string }>`
      select kind, key, stream_id from claims c
       where not exists (select 1 from events e where e.stream_id = c.stream_id and e.stream_version = 1) limit 1`.execute(trx);
    if (orphans[0]) {
      this.refuse({ kind: 'claim_orphaned', line: null, detail: `the claim ${orphans[0].kind} ${JSON.stringify(orphans[0].key)} is held by ${orphans[0].stream_id}, a stream not in the log` });
    }
    if (this.transactions !== this.declared.transactions || (this.counts.events > 0 && String(this.maxSeen) !== this.declared.max)) {
      this.refuse({ kind: 'count_mismatch', line: null, detail: `the bundle header counts ${this.declared.transactions} transactions up to id ${this.declared.max}; the events are of ${this.transactions}, up to ${this.maxSeen}` });
    }
    if (this.counts.events > 0 && BigInt(this.transactionId) >= this.ownTransaction) throw new NoRoom(BigInt(this.transactionId) - this.ownTransaction + 1n);

    for (const seal of this.seals) {
      const first = this.boundTx.get(seal.first_position);
      const last = this.boundTx.get(seal.last_position);
      if (first === undefined || last === undefined) this.refuse({ kind: 'seal_mismatch', line: null, detail: `seal ${String(seal.id)} is bounded by positions not in the log` });
      await this.database(
        () =>
          sql`insert into event_seals (id, first_transaction_id, first_position, last_transaction_id, last_position, event_count, merkle_root, previous_seal_hash, seal_hash, created_at)
              values (${seal.id ?? sql`default`}, ${first}::xid8, ${seal.first_position}::bigint, ${last}::xid8,
                      ${seal.last_position}::bigint, ${seal.event_count}, ${seal.merkle_root}, ${seal.previous_seal_hash}, ${seal.seal_hash}, ${seal.created_at ?? sql`now()`}::timestamptz)`.execute(trx),
        'seals',
      );
    }
    for (const head of this.heads) {
      await trx
        .insertInto('log_tree_heads')
        .values({ tree_size: String(head.treeSize), timestamp_ms: String(head.timestamp), root_hash: head.rootHash, signature: head.signature })
        .execute();
    }
    if (this.seals.length > 0) {
      await sql`select setval(pg_get_serial_sequence('event_seals', 'id')::regclass, greatest((select max(id) from event_seals), (select last_value from event_seals_id_seq)), true)`.execute(trx);
    }
    // Ids continue after the log's positions (notes take theirs from this sequence too).
    if (this.lastPosition !== null) {
      await sql`select setval('public.events_global_position_seq'::regclass, greatest(${String(this.maxSequencePosition)}::bigint, (select max(global_position) from events)), true)`.execute(trx);
    }
    if (this.options.content) {
      await this.database(() => this.options.content!.finish(trx), 'derived content');
      const found: Problem[] = [];
      await this.options.content.check(trx).store((p) => found.push(p), () => {});
      if (found[0]) this.refuseProblem(found[0], null);
    }
    // Reactors start at the imported log's end: nothing of its history fires again.
    // Projections have no checkpoint: `rebuild --all` (or a worker, on start) rebuilds them.
    await sql`delete from projection_checkpoints`.execute(trx);
    if (this.previous && this.options.reactors && this.options.reactors.length > 0) {
      const end = this.transactionId;
      for (const name of this.options.reactors) {
        await sql`insert into projection_checkpoints (name, version, transaction_id, global_position)
                  values (${name}, 1, ${end}::xid8, ${this.lastPosition}::bigint)`.execute(trx);
      }
    }
    for (const definition of this.deferredIndexes) await sql.raw(definition).execute(trx);
    await sql`alter table events enable trigger events_stream_order`.execute(trx);
    return {
      counts: this.counts,
      streams: this.streamHeads.size,
      indexesChecked: this.indexesChecked,
      sealsChecked: this.sealChecker?.sealsChecked ?? 0,
      treeSize: this.treeStored,
      headsChecked: this.headsChecked,
      signaturesChecked: this.options.publicKey !== undefined,
      transactionIds: this.transactions,
      transactionIdsKept: this.keepIds,
      lastPosition: this.lastPosition,
    };
  }

  // ─────────────────────────── refusals ───────────────────────────

  private refuse(refusal: Omit<ImportRefusal, 'line'> & { line?: number | null }): never {
    throw new ImportRefused({ ...refusal, line: refusal.line === undefined ? this.line : refusal.line });
  }

  /** refuseProblem for the checks of verify.ts (made once: not a closure per event). */
  private readonly problem = (p: Problem) => this.refuseProblem(p);

  private refuseProblem(problem: Problem, line?: number | null): never {
    this.refuse({
      kind: problem.kind,
      ...(line !== undefined ? { line } : {}),
      ...(problem.position ? { position: problem.position } : {}),
      ...(problem.streamId ? { streamId: problem.streamId } : {}),
      detail: problem.detail,
    });
  }

  /** Runs a write; a constraint the database enforces (a repeated event id or position) is named with its line. */
  private async database<T>(write: () => Promise<T>, what: string, batch?: readonly PendingEvent[]): Promise<T> {
    try {
      return await write();
    } catch (error) {
      const e = error as { code?: string; detail?: string; message?: string };
      if (typeof e.code !== 'string' || !/^(22|23)/.test(e.code)) throw error;
      const key = /\)=\(([^)]*)\)/.exec(e.detail ?? '')?.[1];
      const culprit = key === undefined ? undefined : batch?.findLast((p) => p.event.event_id === key || p.event.global_position === key);
      this.refuse({
        kind: e.code === '23505' ? 'duplicate' : 'refused_by_database',
        ...(culprit ? { line: culprit.line, position: culprit.event.global_position, streamId: culprit.event.stream_id } : batch?.[0] ? { line: batch[0].line } : {}),
        detail: `the database refused ${what}${batch && !culprit ? ` (lines ${batch[0]!.line}–${batch.at(-1)!.line})` : ''}: ${e.message ?? String(error)}${e.detail ? ` (${e.detail})` : ''}`,
      });
    }
  }
}

function base64(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return undefined;
  return Buffer.from(value, 'base64');
}

/**
 * The uploads an event names: every `{sha256, size, filename}` object in its data (an avatar,
 * src/domain/uploads.ts's UploadRef), wherever it sits.
 */
export function uploadsNamedBy(data: unknown, found: string[] = []): string[] {
  if (data === null || typeof data !== 'object') return found;
  if (Array.isArray(data)) {
    for (const item of data) uploadsNamedBy(item, found);
    return found;
  }
  const object = data as Record<string, unknown>;
  if (typeof object.sha256 === 'string' && /^[0-9a-f]{64}$/.test(object.sha256) && typeof object.size === 'number' && typeof object.filename === 'string') {
    found.push(object.sha256);
  }
  for (const key in object) {
    const value = object[key];
    if (value !== null && typeof value === 'object') uploadsNamedBy(value, found);
  }
  return found;
}
