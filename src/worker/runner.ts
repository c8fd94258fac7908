import { sql } from 'kysely';
import type pg from 'pg';
import { isConnectionError } from '../database/pg-client.js';
import type { Db, DatabaseHandle } from '../database/database.js';
import type { Notifier } from '../eventstore/notifier.js';
import { readTypesAfter, type TypedRead } from '../eventstore/store.js';
import { LOG_START, checkpointOf, compareCheckpoints, type Checkpoint } from '../eventstore/types.js';
import type { Projector } from '../projections/projector.js';
import { ADVISORY_LOCK_CLASS } from '../database/advisory-lock.js';
import { applyEvents, rebuildProjections, type RebuildOptions } from '../projections/rebuild.js';
import type { Reactor } from '../commands/kernel/reactor.js';
import { readProjectionLag } from '../projections/status.js';

/**
 * The async side of the read path: one worker follows the log for a set of projections and
 * reactors, each from its checkpoint row in `projection_checkpoints`.
 *
 * - One holder per projection: a session advisory lock on a dedicated connection
 *   (PostgreSQL). Other workers stand by and retry each poll; when the holder dies its
 *   connection closes, the lock is freed and one of them takes over. Workers of one process
 *   also exclude each other in memory (all there is on PGlite, a single process).
 * - Rolling deploys: a worker whose projector version is older than the stored one gives
 *   the lock back and keeps off it for a while, so the newer code holds the projection.
 * - A step reads the events of the follower's types after its checkpoint in gap-free order
 *   (one statement, shared by the followers that step from the same checkpoint: sharedRead);
 *   a projection's batch is then one short transaction that applies them and moves the
 *   checkpoint with a compare-and-set on its position and version — read tables and checkpoint
 *   commit together, and a paused former holder cannot move it back: its compare-and-set waits
 *   for the batch that moved the row, then finds it moved and rolls its own batch back.
 * - While it holds the lock a follower keeps its checkpoint in memory, as its last
 *   compare-and-set left it; any error forgets it, and the next step reads the row again.
 * - Wake-ups: `Notifier.onAppended`, plus polling as the fallback.
 * - A projector whose stored version is older than its code is rebuilt first (rebuild.ts);
 *   an inline projector is only checked and rebuilt, never followed (commands keep it).
 */

export interface WorkerOptions<Context = unknown> {
  projectors?: readonly Projector[];
  reactors?: readonly Reactor<Context>[];
  /** How reactors issue commands; required when there are reactors. */
  commands?: Context;
  notifier?: Notifier;
  /** Polling fallback and stand-by retry interval (default 500 ms; serve: FORGELOG_POLL_INTERVAL_MS). */
  pollIntervalMs?: number;
  /**
   * How long a follower that holds its lock and has read everything waits when nothing wakes
   * it (default: pollIntervalMs). serve: a rare safety poll while the process hears every
   * append (runtime.ts, idleWait); the stand-by retry stays pollIntervalMs.
   */
  idleMs?: () => number;
  /** Events per batch transaction (default 500). */
  batchSize?: number;
  rebuild?: RebuildOptions;
  onError?: (name: string, error: unknown) => void;
}

export type FollowerState = 'idle' | 'standby' | 'rebuilding' | 'following' | 'inline' | 'stopped';

export interface ProjectionLag {
  /** Checkpoint row name: the projector's name, or `reactor:<name>`. */
  readonly name: string;
  readonly version: number | null;
  readonly checkpoint: Checkpoint | null;
  /** Events after the checkpoint (capped at 100,000); 0 for inline projections. */
  readonly eventsBehind: number;
  readonly state: FollowerState;
  readonly holder: boolean;
  readonly lastError: string | null;
}

interface Follower {
  readonly name: string;
  readonly lockName: string;
  readonly projector?: Projector;
  readonly reactor?: Reactor<any>;
  state: FollowerState;
  held: boolean;
  current: boolean;
  lastError: string | null;
  failures: number;
  /** Set when a newer version of this projection runs elsewhere: no lock attempts before then. */
  retiredUntil: number;
  /** Consecutive steps that found committed events behind the visible horizon (back-off). */
  heldBack: number;
  dirty: boolean;
  /** The checkpoint row as this follower last read or moved it, while it holds the lock. */
  at: StoredCheckpoint | undefined;
  wake?: () => void;
  /** A wake-up due for appends of types this follower does not read (wakeAll). */
  lazyWake?: NodeJS.Timeout | undefined;
  mutex: Promise<unknown>;
}

/**
 * A step's events read, and what next: go on at once ('more'), retry shortly because
 * committed events wait behind the visible horizon ('soon'), wait for a wake-up or the next
 * poll ('done'), or stand by ('busy').
 */
interface Outcome {
  readonly next: 'more' | 'soon' | 'done' | 'busy';
  readonly read: number;
}
const BUSY: Outcome = { next: 'busy', read: 0 };
const IDLE: Outcome = { next: 'done', read: 0 };
/** How soon a follower hears of appends of types it does not read (its checkpoint moves past them). */
const LAZY_WAKE_MS = 1_000;
/** Retry interval while a transaction elsewhere holds the horizon below committed events. */
const HELD_BACK_RETRY_MS = 25;
/** The longest wait between attempts while the database cannot be reached. */
const CONNECTION_RETRY_MAX_MS = 2_000;

/** Which worker of this process holds which name, per database. */
const heldInProcess = new WeakMap<Db, Map<string, ProjectionWorker>>();

class Fenced extends Error {
  constructor(name: string) {
    super(`checkpoint of ${name} moved under this worker`);
  }
}

export class ProjectionWorker<Context = unknown> {
  private readonly followers: Follower[];
  private readonly pollIntervalMs: number;
  private readonly batchSize: number;
  private running = false;
  /** Set by stop(): reactors end their batch after the reaction in hand. */
  private stopping = false;
  private loops: Promise<void>[] = [];
  private unsubscribe: (() => void) | undefined;
  private lockClient: Promise<pg.PoolClient> | undefined;
  /** The types every follower of this worker reads: what a shared read asks for. */
  private readonly followedTypes: readonly string[];
  /** Appends heard of so far; a shared read serves only steps that began before the next one. */
  private generation = 0;
  /** Reads of the log in flight, by the checkpoint they read after (sharedRead). */
  private readonly reads = new Map<string, { generation: number; read: Promise<TypedRead> }>();

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly options: WorkerOptions<Context>,
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.batchSize = options.batchSize ?? 500;
    if (options.reactors?.length && !options.commands) throw new Error('ProjectionWorker: reactors need `commands`');
    const base = { state: 'idle' as const, held: false, current: false, lastError: null, failures: 0, retiredUntil: 0, heldBack: 0, dirty: false, at: undefined, mutex: Promise.resolve() };
    this.followers = [
      ...(options.projectors ?? []).map((projector) => ({ ...base, name: projector.name, lockName: `projection:${projector.name}`, projector })),
      ...(options.reactors ?? []).map((reactor) => ({ ...base, name: `reactor:${reactor.name}`, lockName: `reactor:${reactor.name}`, reactor })),
    ];
    const followed = [...(options.projectors ?? []).filter((p) => p.mode !== 'inline'), ...(options.reactors ?? [])];
    this.followedTypes = [...new Set(followed.flatMap((follower) => follower.handles))];
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    // A LISTEN connection lost or back wakes every follower too ("any type"): each looks now, and waits as it then may.
    this.unsubscribe = this.options.notifier?.onAppended((types) => {
      this.generation += 1;
      this.wakeAll(types);
    });
    this.loops = this.followers.map((f) => this.loop(f));
  }

  /** Stops following; waits for the batches in flight, then frees the locks. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.wakeAll(); // and clears the lazy wake-ups
    await Promise.all(this.loops);
    this.loops = [];
    await Promise.all(this.followers.map((f) => f.mutex));
    const client = this.lockClient;
    this.lockClient = undefined;
    for (const f of this.followers) {
      f.state = 'stopped';
      if (f.held) this.letGo(f);
    }
    if (client) {
      const c = await client.catch(() => undefined);
      if (c) {
        try {
          await c.query('select pg_advisory_unlock_all()');
          c.release();
        } catch {
          c.release(true);
        }
      }
    }
  }

  /**
   * Processes every held (or now acquirable) projection and reactor until its checkpoint
   * reaches the log's head as of the call, waiting while a transaction elsewhere in the
   * cluster holds back the visible horizon. Skips what another worker holds. Returns the
   * number of events of its types read. For tests and the CLI.
   */
  async catchUp(opts: { timeoutMs?: number } = {}): Promise<number> {
    const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
    const target = await headOf(this.handle.db);
    let total = 0;
    for (const f of this.followers) {
      total += await this.exclusive(f, async () => {
        f.at = undefined; // from the row as it is now: someone may have moved it
        let read = 0;
        for (;;) {
          const outcome = await this.step(f);
          read += outcome.read;
          if (outcome.read > 0 || outcome.next === 'more') continue;
          if (outcome.next === 'busy' || f.state === 'inline') return read; // not ours to follow now
          const at = await readCheckpoint(this.handle.db, f.name);
          if (at && compareCheckpoints(at.checkpoint, target) >= 0) return read;
          if (Date.now() > deadline) throw new Error(`${f.name} did not catch up in time: a transaction elsewhere holds back the visible log`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      });
    }
    return total;
  }

  /** Resolves when every followed checkpoint has reached the log's head as of the call. */
  async waitUntilCaughtUp(opts: { timeoutMs?: number } = {}): Promise<void> {
    const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
    const target = await headOf(this.handle.db);
    // Followers sleep until an append of their types (or the slow poll): the head may hold none.
    for (const f of this.followers) this.wake(f);
    const names = this.followers.filter((f) => f.projector?.mode !== 'inline').map((f) => f.name);
    for (;;) {
      const rows = await readProjectionLag(this.handle.db, names);
      const behind = names.filter((name) => {
        const row = rows.find((r) => r.name === name);
        return !row?.checkpoint || compareCheckpoints(row.checkpoint, target) < 0;
      });
      if (behind.length === 0) return;
      if (Date.now() > deadline) throw new Error(`projections not caught up in time: ${behind.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Each follower's checkpoint, distance to the head, and this worker's view of it. */
  async lag(): Promise<ProjectionLag[]> {
    const rows = await readProjectionLag(this.handle.db, this.followers.map((f) => f.name));
    return this.followers.map((f) => {
      const row = rows.find((r) => r.name === f.name);
      return {
        name: f.name,
        version: row?.version ?? null,
        checkpoint: row?.checkpoint ?? null,
        eventsBehind: f.projector?.mode === 'inline' ? 0 : (row?.eventsBehind ?? 0),
        state: f.state,
        holder: f.held,
        lastError: f.lastError,
      };
    });
  }

  // ───────────────────────────── Loop ─────────────────────────────

  private async loop(f: Follower): Promise<void> {
    while (this.running) {
      let outcome: Outcome;
      try {
        outcome = await this.exclusive(f, () => this.step(f));
        if (outcome.next !== 'busy') f.lastError = null;
        f.failures = 0;
      } catch (error) {
        f.at = undefined;
        f.lastError = error instanceof Error ? error.message : String(error);
        f.failures += 1;
        if (!(error instanceof Fenced)) this.reportError(f.name, error);
        // While the database is unreachable, try again every few seconds at most: the
        // follower resumes soon after it is back (a lost lock connection is re-acquired).
        await this.sleep(f, Math.min(250 * 2 ** f.failures, isConnectionError(error) ? CONNECTION_RETRY_MAX_MS : 30_000));
        continue;
      }
      f.heldBack = outcome.next === 'soon' ? f.heldBack + 1 : 0;
      if (outcome.next === 'soon') await this.sleep(f, Math.min(HELD_BACK_RETRY_MS * 2 ** Math.min(f.heldBack - 1, 8), this.pollIntervalMs));
      else if (outcome.next === 'done') await this.sleep(f, this.options.idleMs?.() ?? this.pollIntervalMs);
      else if (outcome.next !== 'more') await this.sleep(f, this.pollIntervalMs);
    }
    f.state = 'stopped';
  }

  private async step(f: Follower): Promise<Outcome> {
    if (!(await this.acquire(f))) {
      f.state = 'standby';
      return BUSY;
    }
    if (!f.current && !(await this.ensureCurrent(f))) {
      await this.release(f); // let the worker running the newer version have it
      return BUSY;
    }
    if (f.projector?.mode === 'inline') {
      f.state = 'inline';
      return IDLE;
    }
    f.state = 'following';
    return f.projector ? this.projectionBatch(f, f.projector) : this.reactorBatch(f, f.reactor!);
  }

  /** Rebuilds an outdated projection; false when a newer version owns it (stand by). */
  private async ensureCurrent(f: Follower): Promise<boolean> {
    const row = await this.handle.db
      .selectFrom('projection_checkpoints')
      .select('version')
      .where('name', '=', f.name)
      .executeTakeFirst();
    if (f.projector) {
      if (row && row.version > f.projector.version) {
        f.state = 'standby';
        f.retiredUntil = Date.now() + Math.max(10 * this.pollIntervalMs, 5_000);
        f.lastError = `version ${row.version} of ${f.name} is deployed elsewhere; this worker runs ${f.projector.version}`;
        return false;
      }
      if (!row || row.version < f.projector.version) {
        f.state = 'rebuilding';
        f.at = undefined;
        await rebuildProjections(this.handle, [f.projector], this.options.rebuild);
      }
    } else if (!row) {
      const at = f.reactor!.startAt === 'head' ? await headOf(this.handle.db) : LOG_START;
      await sql`insert into projection_checkpoints (name, version, transaction_id, global_position)
        values (${f.name}, 1, ${at.transactionId}::xid8, ${at.globalPosition}::bigint) on conflict (name) do nothing`.execute(this.handle.db);
    }
    f.current = true;
    return true;
  }

  private async projectionBatch(f: Follower, projector: Projector): Promise<Outcome> {
    const db = this.handle.db;
    const from = f.at ?? (await readCheckpoint(db, f.name));
    if (!from || from.version !== projector.version) {
      f.at = undefined;
      f.current = false;
      return BUSY;
    }
    const read = await this.sharedRead(from.checkpoint, projector.handles);
    if (compareCheckpoints(read.through, from.checkpoint) !== 0) {
      f.at = await db.transaction().execute(async (trx) => {
        if (read.events.length > 0) await applyEvents(projector, read.events, trx);
        return advance(trx, f.name, from, read.through);
      });
    } else f.at = from;
    return nextOf(read);
  }

  /** At-least-once reactions, made idempotent by a receipt per (reactor, event id). */
  private async reactorBatch(f: Follower, reactor: Reactor<Context>): Promise<Outcome> {
    const db = this.handle.db;
    // Receipts past the checkpoint are those of reactions whose checkpoint was moved back under
    // them (recordReaction): looked for when the checkpoint is read from its row, not while this
    // follower moves it itself (a former holder still reacting meanwhile is covered, as it
    // always was between the look and the reaction, by the reactions' own idempotency).
    const fromRow = f.at === undefined;
    let at = f.at ?? (await readCheckpoint(db, f.name));
    if (!at) {
      f.current = false;
      return BUSY;
    }
    f.at = at;
    // Only the events it reacts to are read, and of those it ignores none is reacted to; the
    // checkpoint still moves past the others.
    const read = await this.sharedRead(at.checkpoint, reactor.handles);
    const { through } = read;
    const events = reactor.ignores ? read.events.filter((event) => !reactor.ignores!(event)) : read.events;
    const seen = fromRow ? await receiptsOf(db, reactor.name, events) : new Set<string>();
    for (const [i, event] of events.entries()) {
      // Each reaction commits its receipt and checkpoint on its own: stopping between two
      // is a batch boundary.
      if (this.stopping) return { next: 'done', read: 0 };
      if (!seen.has(event.eventId)) await reactor.react(event, this.options.commands as Context);
      // The last reaction of the read moves the checkpoint past the other types' events after it.
      const next = i === events.length - 1 ? through : checkpointOf(event);
      f.at = at = await recordReaction(db, reactor.name, event.eventId, f.name, at, next);
    }
    if (compareCheckpoints(at.checkpoint, through) !== 0) f.at = await advance(db, f.name, at, through);
    return nextOf(read);
  }

  /**
   * The events of `types` after a checkpoint, as readTypesAfter reads them. Followers woken by
   * one append step together from the same checkpoint (the head, mostly): the first to read
   * after it reads every follower's types, and the others take their part of that read while
   * it is in flight, unless an append was heard of since it began (it might not see that one).
   */
  private sharedRead(after: Checkpoint, types: readonly string[]): Promise<StepRead> {
    const key = `${after.transactionId}:${after.globalPosition}`;
    let shared = this.reads.get(key);
    if (!shared || shared.generation !== this.generation) {
      const read = readTypesAfter(this.handle.db, after, this.followedTypes, this.batchSize);
      const entry = { generation: this.generation, read };
      this.reads.set(key, entry);
      const forget = () => {
        if (this.reads.get(key) === entry) this.reads.delete(key);
      };
      read.then(forget, forget);
      shared = entry;
    }
    return shared.read.then((all) => {
      const wanted = new Set(types);
      const events = all.events.filter((event) => wanted.has(event.type));
      // A full page of every follower's types: this follower's read ends where that page does.
      const more = all.events.length === this.batchSize;
      return { events, through: more ? checkpointOf(all.events.at(-1)!) : all.through, heldBack: all.heldBack, more };
    });
  }

  // ───────────────────────────── Locks ─────────────────────────────

  private async acquire(f: Follower): Promise<boolean> {
    if (f.held) return true;
    if (Date.now() < f.retiredUntil) return false;
    // Workers of one process share a database handle: one holder per name among them too
    // (all there is on PGlite; on PostgreSQL the advisory lock below covers other processes).
    const holders = heldInProcess.get(this.handle.db) ?? new Map<string, ProjectionWorker>();
    heldInProcess.set(this.handle.db, holders);
    const holder = holders.get(f.lockName);
    if (holder && holder !== this) return false;
    if (this.handle.kind !== 'postgres' || !this.handle.pool) {
      holders.set(f.lockName, this);
      f.held = true;
      f.current = false;
      return true;
    }
    const client = await this.connectLockClient();
    const { rows } = await this.onLockClient(() =>
      client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [ADVISORY_LOCK_CLASS, f.lockName]),
    );
    if (!rows[0]?.ok) return false;
    holders.set(f.lockName, this);
    f.held = true;
    f.current = false; // the previous holder may have run another version
    return true;
  }

  /** One connection per worker holds its session advisory locks; losing it loses them all. */
  private connectLockClient(): Promise<pg.PoolClient> {
    if (this.lockClient) return this.lockClient;
    const pending = (this.handle.sessions ?? this.handle.pool!).connect().then((client) => {
      const lost = () => {
        if (this.lockClient !== pending) return;
        this.lockClient = undefined;
        for (const f of this.followers) {
          if (f.held) this.letGo(f);
          if (f.state !== 'stopped') f.state = 'standby';
        }
        client.release(true);
      };
      client.on('error', lost);
      client.on('end', lost);
      return client;
    });
    pending.catch(() => {
      if (this.lockClient === pending) this.lockClient = undefined;
    });
    this.lockClient = pending;
    return pending;
  }

  /** Gives one name's lock back (the others stay held). */
  private async release(f: Follower) {
    if (!f.held) return;
    this.letGo(f);
    const client = this.lockClient && (await this.lockClient.catch(() => undefined));
    if (client) {
      await this.onLockClient(() => client.query('select pg_advisory_unlock($1, hashtext($2))', [ADVISORY_LOCK_CLASS, f.lockName])).catch(() => {});
    }
  }

  private lockQueue: Promise<unknown> = Promise.resolve();

  /** Followers share the lock connection: one query on it at a time (pg refuses overlapping ones). */
  private onLockClient<T>(query: () => Promise<T>): Promise<T> {
    const run = this.lockQueue.then(query, query);
    this.lockQueue = run.catch(() => undefined);
    return run;
  }

  private letGo(f: Follower) {
    f.held = false;
    f.at = undefined;
    const holders = heldInProcess.get(this.handle.db);
    if (holders?.get(f.lockName) === this) holders.delete(f.lockName);
  }

  // ───────────────────────────── Plumbing ─────────────────────────────

  private exclusive<T>(f: Follower, fn: () => Promise<T>): Promise<T> {
    const run = f.mutex.then(fn, fn);
    f.mutex = run.catch(() => {});
    return run;
  }

  private sleep(f: Follower, ms: number): Promise<void> {
    if (f.dirty || !this.running) {
      f.dirty = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        f.wake = undefined;
        f.dirty = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      f.wake = done;
    });
  }

  /**
   * Wakes the followers that read one of `types` (all of them when the types are unknown). The
   * others are woken once within LAZY_WAKE_MS, however many appends come meanwhile: their
   * checkpoints move past what they do not read without a batch per append, and an idle log
   * wakes nobody.
   */
  private wakeAll(types?: readonly string[]) {
    for (const f of this.followers) {
      if (types && !types.some((type) => (f.projector ?? f.reactor)!.handles.includes(type))) {
        if (this.running && !f.lazyWake) {
          f.lazyWake = setTimeout(() => {
            f.lazyWake = undefined;
            this.wake(f);
          }, LAZY_WAKE_MS);
        }
        continue;
      }
      this.wake(f);
    }
  }

  private wake(f: Follower) {
    clearTimeout(f.lazyWake);
    f.lazyWake = undefined;
    f.dirty = true;
    f.wake?.();
  }

  private reportError(name: string, error: unknown) {
    if (this.options.onError) return this.options.onError(name, error);
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'projection batch failed', projection: name, error: message })}\n`);
  }
}

// ───────────────────────────── Queries ─────────────────────────────

interface StoredCheckpoint {
  readonly version: number;
  readonly checkpoint: Checkpoint;
}

/** A follower's part of a shared read (sharedRead); `more` when the read was a full page. */
interface StepRead extends TypedRead {
  readonly more: boolean;
}

/** What a step that read `read` does next: go on at once after a full page, retry shortly while events are held back. */
const nextOf = (read: StepRead): Outcome => ({ next: read.more ? 'more' : read.heldBack ? 'soon' : 'done', read: read.events.length });

async function readCheckpoint(db: Db, name: string): Promise<StoredCheckpoint | undefined> {
  const { rows } = await sql<{ version: number; transaction_id: string; global_position: string }>`
    select version, transaction_id::text as transaction_id, global_position from projection_checkpoints where name = ${name}`.execute(db);
  const row = rows[0];
  return row && { version: row.version, checkpoint: toCheckpoint(row) };
}

/** Compare-and-set: moves the checkpoint only from where (and at the version) this follower found it. */
async function advance(db: Db, name: string, from: StoredCheckpoint, to: Checkpoint): Promise<StoredCheckpoint> {
  const result = await sql`
    update projection_checkpoints
       set transaction_id = ${to.transactionId}::xid8, global_position = ${to.globalPosition}::bigint, updated_at = now()
     where ${movable(name, from)}`.execute(db);
  if (Number(result.numAffectedRows ?? 0) !== 1) throw new Fenced(name);
  return { version: from.version, checkpoint: to };
}

/**
 * The reaction's receipt, and advance, in one statement. The receipt is kept even when the
 * checkpoint was moved under this follower: the reaction has run, and must not run again when
 * the event is read anew.
 */
async function recordReaction(db: Db, reactor: string, eventId: string, name: string, from: StoredCheckpoint, to: Checkpoint): Promise<StoredCheckpoint> {
  const { rows } = await sql<{ moved: number }>`
    with receipt as (
      insert into reactor_receipts (reactor, event_id) values (${reactor}, ${eventId}) on conflict do nothing
    ), moved as (
      update projection_checkpoints
         set transaction_id = ${to.transactionId}::xid8, global_position = ${to.globalPosition}::bigint, updated_at = now()
       where ${movable(name, from)}
      returning 1
    )
    select count(*)::int as moved from moved`.execute(db);
  if (rows[0]?.moved !== 1) throw new Fenced(name);
  return { version: from.version, checkpoint: to };
}

const movable = (name: string, from: StoredCheckpoint) =>
  sql<boolean>`name = ${name} and version = ${from.version} and transaction_id = ${from.checkpoint.transactionId}::xid8 and global_position = ${from.checkpoint.globalPosition}::bigint`;

/** The events among `events` a reactor has a receipt of (reacted to before its checkpoint was moved back). */
async function receiptsOf(db: Db, reactor: string, events: readonly { eventId: string }[]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const rows = await db
    .selectFrom('reactor_receipts')
    .select('event_id')
    .where('reactor', '=', reactor)
    .where('event_id', 'in', events.map((event) => event.eventId))
    .execute();
  return new Set(rows.map((row) => row.event_id));
}

/** The last committed event in gap-free order (LOG_START for an empty log). */
async function headOf(db: Db): Promise<Checkpoint> {
  // By the xid8 column (events.…): by the text alias, '999' would sort after '1156'.
  const { rows } = await sql<{ transaction_id: string; global_position: string }>`
    select transaction_id::text as transaction_id, global_position from events
     order by events.transaction_id desc, events.global_position desc limit 1`.execute(db);
  return rows[0] ? toCheckpoint(rows[0]) : LOG_START;
}

function toCheckpoint(row: { transaction_id: string; global_position: string }): Checkpoint {
  return { transactionId: String(row.transaction_id), globalPosition: String(row.global_position) };
}
