import { sql, type Kysely } from 'kysely';
import type { Database } from '../database/database.js';
import { SEAL_LOCK } from './seal.js';

/**
 * Re-basing stored transaction ids after a logical dump/restore (DESIGN.md, "Caveats of
 * the gap-free read").
 *
 * `events.transaction_id` holds the xid8 of the writing transaction in the cluster that
 * wrote it. Restored into another cluster whose transaction counter is behind, the stored
 * ids are "in the future": gap-free readers only read `transaction_id < snapshot xmin`, so
 * every restored event past the counter is invisible to them, new events sort before the
 * restored ones (a checkpoint pointing at a restored event never reaches them), and the
 * per-stream order trigger refuses every append to a restored stream (its head was
 * "written later") — the system stalls.
 *
 * Why this is the one sanctioned mutation of the append-only log:
 * - transaction_id is not part of an event's content. It is a physical ordering key of the
 *   cluster that wrote the event; neither the event hash (hash.ts) nor the seals (seal.ts)
 *   cover it, so rewriting it alters no fact and breaks no chain.
 * - The rewrite preserves the gap-free order exactly, and which events were committed
 *   together: each stored id becomes FIRST_NORMAL_XID + its rank among the log's ids. So (new id,
 *   position) orders every event as (old id, position) did, checkpoints and seal bounds are
 *   mapped to the new ids of the very events they point at, and every reader, seal and Merkle
 *   root sees the same sequence; the activity feeds, which hide an event committed with its
 *   resource's creation by their shared id, hide the same events. One id per transaction.
 * - It runs in one transaction that takes exclusive locks on the log, its checkpoints and
 *   seals, disables the immutability triggers of events and seals, rewrites, and re-enables
 *   them before commit: no other session ever sees a trigger off (DDL is transactional).
 * Run it right after the restore, before `serve` or `worker` append anything.
 */

/** The first normal xid; new ids are FIRST_NORMAL_XID, FIRST_NORMAL_XID + 1, … (the values 0–2 are special xids). */
export const FIRST_NORMAL_XID = 3n;

export interface RebaseOptions {
  /** Only report whether a re-base is needed. */
  dryRun?: boolean;
  /**
   * When the new ids do not fit below the cluster's current transaction counter (a young
   * cluster and many out-of-order commits), consume that many transaction ids first
   * (default true).
   */
  advanceIfNeeded?: boolean;
}

export interface RebaseReport {
  /** Stored transaction ids were at or ahead of the cluster's snapshot xmin. */
  needed: boolean;
  rebased: boolean;
  /** The highest stored transaction id before (and after) the run. */
  maxTransactionIdBefore: string | null;
  maxTransactionIdAfter: string | null;
  /** The cluster's snapshot xmin when checked. */
  snapshotXmin: string;
  /** Distinct transaction ids the log now uses. */
  transactionIds: number;
  eventsRewritten: number;
  checkpointsRewritten: number;
  sealsRewritten: number;
  /** Transaction ids consumed to make room. */
  advanced: number;
}

class NoRoom extends Error {
  constructor(readonly needed: bigint) {
    super(`re-base needs ${needed} more transaction ids`);
  }
}

/**
 * Detects stored transaction ids ahead of this cluster and re-bases them (events,
 * projection checkpoints and seal bounds), preserving the gap-free order. Idempotent: a
 * second run finds nothing to do. Needs the owner of the events and event_seals tables (ALTER TABLE).
 */
export async function rebaseTransactionIds(db: Kysely<Database>, options: RebaseOptions = {}): Promise<RebaseReport> {
  let advanced = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      const report = await db.transaction().execute((trx) => rebaseInTransaction(trx, options.dryRun ?? false));
      return { ...report, advanced };
    } catch (error) {
      if (!(error instanceof NoRoom) || options.advanceIfNeeded === false || attempt > 0) throw error;
      const count = Number(error.needed) + 100;
      await advanceTransactionIds(db, count);
      advanced += count;
    }
  }
}

async function rebaseInTransaction(trx: Kysely<Database>, dryRun: boolean): Promise<Omit<RebaseReport, 'advanced'>> {
  // Writers, projectors and sealers wait (plain reads go on) until this commits.
  await sql`lock table events, projection_checkpoints, event_seals in exclusive mode`.execute(trx);
  await sql`select ${SEAL_LOCK}`.execute(trx);
  // Takes this transaction's own xid first, so the xmin read next is at most that.
  await sql`select pg_current_xact_id()`.execute(trx);
  const { rows } = await sql<{ max_tx: string | null; xmin: string }>`
    select (select max(transaction_id) from events)::text as max_tx,
           pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(trx);
  const { max_tx: maxBefore, xmin } = rows[0]!;
  const report = {
    needed: maxBefore !== null && BigInt(maxBefore) >= BigInt(xmin),
    rebased: false,
    maxTransactionIdBefore: maxBefore,
    maxTransactionIdAfter: maxBefore,
    snapshotXmin: xmin,
    transactionIds: 0,
    eventsRewritten: 0,
    checkpointsRewritten: 0,
    sealsRewritten: 0,
  };
  if (!report.needed || dryRun) return report;

  // The new id of every event: FIRST_NORMAL_XID + the rank of its old id among the log's ids.
  await sql`
    create temporary table forgelog_rebase on commit drop as
    select global_position, transaction_id as old_tx,
           (${String(FIRST_NORMAL_XID)}::bigint + dense_rank() over (order by transaction_id) - 1)::text::xid8 as new_tx
      from events`.execute(trx);
  await sql`alter table forgelog_rebase add primary key (global_position)`.execute(trx);
  await sql`create index on forgelog_rebase (old_tx, global_position)`.execute(trx);
  await sql`analyze forgelog_rebase`.execute(trx);
  const { rows: span } = await sql<{ top: string }>`select max(new_tx)::text as top from forgelog_rebase`.execute(trx);
  const top = BigInt(span[0]!.top);
  if (top >= BigInt(xmin)) throw new NoRoom(top - BigInt(xmin) + 1n);
  report.transactionIds = Number(top - FIRST_NORMAL_XID + 1n);

  // Seal bounds must be events of the log; a seal pointing at a missing event means the
  // log or the seals were tampered with — verify first, do not re-base over it.
  const { rows: orphans } = await sql<{ id: number }>`
    select s.id from event_seals s
     where not exists (select 1 from forgelog_rebase r where r.global_position = s.first_position and r.old_tx = s.first_transaction_id)
        or not exists (select 1 from forgelog_rebase r where r.global_position = s.last_position and r.old_tx = s.last_transaction_id)
     limit 5`.execute(trx);
  if (orphans.length > 0) {
    throw new Error(`seals ${orphans.map((o) => o.id).join(', ')} are bounded by events not in the log: run \`forgelog events verify\` before re-basing`);
  }
  // The seals' append-only trigger too is off only inside this transaction (see the top of this file).
  await sql`alter table event_seals disable trigger event_seals_immutable`.execute(trx);
  const seals = await sql`
    update event_seals s
       set first_transaction_id = f.new_tx, last_transaction_id = l.new_tx
      from forgelog_rebase f, forgelog_rebase l
     where f.global_position = s.first_position and l.global_position = s.last_position`.execute(trx);
  await sql`alter table event_seals enable trigger event_seals_immutable`.execute(trx);
  report.sealsRewritten = Number(seals.numAffectedRows ?? 0n);

  // A checkpoint means "everything up to here in gap-free order": it moves to the new id of
  // the last event at or before it, so it covers exactly the same events.
  const checkpoints = await sql`
    update projection_checkpoints c
       set transaction_id = coalesce(m.new_tx, '0'::xid8), global_position = coalesce(m.global_position, 0)
      from projection_checkpoints c0
      left join lateral (
        select r.new_tx, r.global_position from forgelog_rebase r
         where (r.old_tx, r.global_position) <= (c0.transaction_id, c0.global_position)
         order by r.old_tx desc, r.global_position desc limit 1) m on true
     where c.name = c0.name and (c0.transaction_id, c0.global_position) > ('0'::xid8, 0::bigint)`.execute(trx);
  report.checkpointsRewritten = Number(checkpoints.numAffectedRows ?? 0n);

  // The sanctioned mutation (see the top of this file): the trigger is off only inside
  // this transaction.
  await sql`alter table events disable trigger events_immutable`.execute(trx);
  const events = await sql`
    update events e set transaction_id = r.new_tx
      from forgelog_rebase r
     where r.global_position = e.global_position and e.transaction_id <> r.new_tx`.execute(trx);
  await sql`alter table events enable trigger events_immutable`.execute(trx);
  report.eventsRewritten = Number(events.numAffectedRows ?? 0n);
  report.maxTransactionIdAfter = String(top);
  report.rebased = true;
  return report;
}

/**
 * Consumes `count` transaction ids (each a committed empty transaction) so the cluster's
 * counter moves ahead. On PostgreSQL a DO block commits in a loop; elsewhere (or if that
 * is refused) one statement per id.
 */
export async function advanceTransactionIds(db: Kysely<Database>, count: number): Promise<void> {
  const n = Math.max(0, Math.floor(count));
  if (n === 0) return;
  try {
    await sql.raw(`do $$ begin for i in 1..${n} loop perform pg_current_xact_id(); commit; end loop; end $$`).execute(db);
    return;
  } catch {
    // Transaction control refused (e.g. inside a transaction block): fall back.
  }
  for (let i = 0; i < n; i++) await sql`select pg_current_xact_id()`.execute(db);
}
