import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import type { Checkpoint } from '../eventstore/types.js';
import type { Projector } from './projector.js';

/**
 * Where each projection and reactor stands against the log, read from the database (so any
 * process — `forgelog projections`, the /-/metrics of any server — sees every worker's
 * progress). For `forgelog projections` and /-/metrics.
 */
export interface FollowerStatus {
  /** Checkpoint row name: the projector's name, or `reactor:<name>`. */
  readonly name: string;
  readonly kind: 'projection' | 'reactor';
  /**
   * `inline`: written in every append's transaction, never behind (its checkpoint row only
   * records where its last rebuild ended). `async`: followed by a worker from its checkpoint.
   */
  readonly mode: 'inline' | 'async';
  /** The stored version (null before a worker first ran it). */
  readonly version: number | null;
  /** The async checkpoint (null for inline projections and before a worker first ran it). */
  readonly checkpoint: Checkpoint | null;
  /** Events after the checkpoint, capped at 100,000; 0 for inline projections. */
  readonly eventsBehind: number;
  /** Age in seconds of the oldest event after the checkpoint; 0 when caught up or inline. */
  readonly secondsBehind: number;
}

/** The seal worker's distance to the log's head. */
export interface SealStatus {
  readonly sealedThrough: Checkpoint | null;
  /** Events after the last seal, capped at 100,000. */
  readonly eventsBehind: number;
  /** Age in seconds of the oldest unsealed event; 0 when everything is sealed. */
  readonly secondsBehind: number;
}

const CAP = 100_000;

export async function readFollowerStatus(
  db: Db,
  followers: { projectors: readonly Projector[]; reactors: readonly { readonly name: string }[] },
  now = Date.now(),
): Promise<FollowerStatus[]> {
  const { rows } = await sql<{ name: string; version: number; transaction_id: string; global_position: string; behind: string; oldest: Date | string | null }>`
    select c.name, c.version, c.transaction_id::text as transaction_id, c.global_position,
           (select count(*) from (select 1 from events e
              where (e.transaction_id, e.global_position) > (c.transaction_id, c.global_position) limit ${CAP}) behind) as behind,
           (select e.occurred_at from events e
              where (e.transaction_id, e.global_position) > (c.transaction_id, c.global_position)
              order by e.transaction_id, e.global_position limit 1) as oldest
      from projection_checkpoints c`.execute(db);
  const byName = new Map(rows.map((row) => [row.name, row]));
  const unstarted = rows.length < followers.projectors.length + followers.reactors.length ? await distanceFromStart(db, now) : undefined;
  const status = (name: string, kind: FollowerStatus['kind'], mode: FollowerStatus['mode']): FollowerStatus => {
    const row = byName.get(name);
    if (mode === 'inline') return { name, kind, mode, version: row?.version ?? null, checkpoint: null, eventsBehind: 0, secondsBehind: 0 };
    if (!row) return { name, kind, mode, version: null, checkpoint: null, ...unstarted! };
    return {
      name,
      kind,
      mode,
      version: row.version,
      checkpoint: { transactionId: String(row.transaction_id), globalPosition: String(row.global_position) },
      eventsBehind: Number(row.behind),
      secondsBehind: age(row.oldest, now),
    };
  };
  return [
    ...followers.projectors.map((p) => status(p.name, 'projection', p.mode)),
    ...followers.reactors.map((r) => status(`reactor:${r.name}`, 'reactor', 'async')),
  ];
}

export async function readSealStatus(db: Db, now = Date.now()): Promise<SealStatus> {
  const seal = await db
    .selectFrom('event_seals')
    .select(['last_transaction_id', 'last_position'])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!seal) return { sealedThrough: null, ...(await distanceFromStart(db, now)) };
  const { rows } = await sql<{ behind: string; oldest: Date | string | null }>`
    select (select count(*) from (select 1 from events e
              where (e.transaction_id, e.global_position) > (${seal.last_transaction_id}::xid8, ${seal.last_position}::bigint) limit ${CAP}) behind) as behind,
           (select e.occurred_at from events e
              where (e.transaction_id, e.global_position) > (${seal.last_transaction_id}::xid8, ${seal.last_position}::bigint)
              order by e.transaction_id, e.global_position limit 1) as oldest`.execute(db);
  return {
    sealedThrough: { transactionId: String(seal.last_transaction_id), globalPosition: String(seal.last_position) },
    eventsBehind: Number(rows[0]?.behind ?? 0),
    secondsBehind: age(rows[0]?.oldest ?? null, now),
  };
}

async function distanceFromStart(db: Db, now: number): Promise<{ eventsBehind: number; secondsBehind: number }> {
  const { rows } = await sql<{ behind: string; oldest: Date | string | null }>`
    select (select count(*) from (select 1 from events limit ${CAP}) behind) as behind,
           (select occurred_at from events order by transaction_id, global_position limit 1) as oldest`.execute(db);
  return { eventsBehind: Number(rows[0]?.behind ?? 0), secondsBehind: age(rows[0]?.oldest ?? null, now) };
}

/** Seconds since `at` (never negative: occurred_at comes from the writers' clocks). */
function age(at: Date | string | null, now: number): number {
  if (at === null) return 0;
  return Math.max(0, (now - new Date(at).getTime()) / 1000);
}

/**
 * Checkpoints and distance to the head (events after the checkpoint, capped at 100,000) of
 * the named projections and reactors, or of all of them. For `lag()`, metrics and the CLI.
 */
export async function readProjectionLag(
  db: Db,
  names?: readonly string[],
): Promise<{ name: string; version: number; checkpoint: Checkpoint; eventsBehind: number }[]> {
  if (names && names.length === 0) return [];
  const { rows } = await sql<{ name: string; version: number; transaction_id: string; global_position: string; behind: string }>`
    select c.name, c.version, c.transaction_id::text as transaction_id, c.global_position,
           (select count(*) from (select 1 from events e
              where (e.transaction_id, e.global_position) > (c.transaction_id, c.global_position) limit 100000) behind) as behind
      from projection_checkpoints c
     where ${names ? sql`c.name in (${sql.join(names)})` : sql`true`}
     order by c.name`.execute(db);
  return rows.map((row) => ({ name: row.name, version: row.version, checkpoint: { transactionId: String(row.transaction_id), globalPosition: String(row.global_position) }, eventsBehind: Number(row.behind) }));
}
