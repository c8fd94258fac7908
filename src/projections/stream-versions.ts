import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import type { Checkpoint, ProjectedEvent } from '../eventstore/types.js';
import { throughCheckpoint } from '../eventstore/store.js';

/**
 * The idempotency guard of a projection (DESIGN.md, "Read path"): per stream, the version of
 * the last event of it the projection applied, in a table of the projection's own
 * (`<name>_stream_versions`, listed in its `tables`, so a rebuild replays and swaps it with
 * the rows). An event whose version is not above the recorded one was applied already: a
 * replay (twice, or an older event after a newer one of the same stream) changes nothing.
 *
 * Why a table and not only a version column on the rows: a deleted row takes its column
 * with it, so an older event replayed after the deletion (MemberAdded after MemberRemoved,
 * ProjectStarred after ProjectDeleted) would write it again. The record of the stream stays.
 */
export interface StreamVersionsTable {
  stream_id: string;
  version: number;
}

type Versioned = Pick<ProjectedEvent, 'streamId' | 'streamVersion'>;

/**
 * Records the event's version and answers whether it is new to the projection (apply it) or
 * a replay (skip it): the guard of an event that may have been applied before.
 */
export async function claimStreamVersion(trx: Db, table: string, event: Versioned): Promise<boolean> {
  const { rows } = await sql`
    insert into ${sql.table(table)} as t (stream_id, version) values (${event.streamId}, ${event.streamVersion})
    on conflict (stream_id) do update set version = excluded.version where t.version < excluded.version
    returning 1 as claimed`.execute(trx);
  return rows.length > 0;
}

/** Records the version of an event its own transaction has just appended (new to every projection): a write only, nothing read back. */
export async function recordStreamVersion(trx: Db, table: string, event: Versioned): Promise<void> {
  await sql`
    insert into ${sql.table(table)} as t (stream_id, version) values (${event.streamId}, ${event.streamVersion})
    on conflict (stream_id) do update set version = excluded.version where t.version < excluded.version`.execute(trx);
}

/**
 * Batch paths: the events of a batch (log order) that are new to the projection — above the
 * recorded version of their stream and above every earlier event of that stream in the
 * batch. Records nothing; `recordStreamVersions` does once the batch is applied.
 */
export async function freshEvents<E extends Versioned>(trx: Db, table: string, events: readonly E[]): Promise<E[]> {
  if (events.length === 0) return [];
  const streams = [...new Set(events.map((e) => e.streamId))];
  const { rows } = await sql<{ stream_id: string; version: number }>`
    select stream_id, version from ${sql.table(table)} where stream_id = any(${streams}::text[])`.execute(trx);
  const seen = new Map(rows.map((r) => [r.stream_id, r.version]));
  const fresh: E[] = [];
  for (const event of events) {
    if (event.streamVersion <= (seen.get(event.streamId) ?? 0)) continue;
    seen.set(event.streamId, event.streamVersion);
    fresh.push(event);
  }
  return fresh;
}

/** Records the highest version of each stream among the events (one statement per 2,000 streams). */
export async function recordStreamVersions(trx: Db, table: string, events: readonly Versioned[]): Promise<void> {
  const highest = new Map<string, number>();
  for (const e of events) if (e.streamVersion > (highest.get(e.streamId) ?? 0)) highest.set(e.streamId, e.streamVersion);
  const entries = [...highest];
  for (let i = 0; i < entries.length; i += 2000) {
    const chunk = entries.slice(i, i + 2000);
    await sql`
      insert into ${sql.table(table)} as t (stream_id, version)
      select * from unnest(${chunk.map(([s]) => s)}::text[], ${chunk.map(([, v]) => v)}::integer[])
      on conflict (stream_id) do update set version = excluded.version where t.version < excluded.version`.execute(trx);
  }
}

/**
 * How a batch path (a projector's `applyBatch`) keeps the guard: which events of the batch it
 * applies, and how it records their versions once they are applied.
 */
export interface BatchGuard {
  /** The events to apply: a subsequence of `events`, in their order. */
  keep<E extends Versioned>(trx: Db, table: string, events: readonly E[]): Promise<readonly E[]>;
  record(trx: Db, table: string, applied: readonly Versioned[]): Promise<void>;
}

/** Any replay that may bring an event again (the async worker, a rebuild's catch-up): only the new events, then their versions. */
export const REPLAY_GUARD: BatchGuard = { keep: freshEvents, record: recordStreamVersions };

/**
 * A rebuild's bulk replay into empty tables: the log brings every event once, in stream order,
 * to tables that have seen none, so each is new. Nothing is read or recorded per batch; the
 * rebuild records every stream's version once, after the last batch (`recordReplayedVersions`).
 */
export const EMPTY_TABLES: BatchGuard = { keep: async (_trx, _table, events) => events, record: async () => {} };

/**
 * After a replay with EMPTY_TABLES: records, in one statement, the version of every stream among
 * the replayed events — those of `types` up to `through` in gap-free order — as applying them
 * one by one would have. The table must be empty.
 */
export async function recordReplayedVersions(trx: Db, table: string, types: readonly string[], through: Checkpoint): Promise<void> {
  if (types.length === 0) return;
  await sql`
    insert into ${sql.table(table)} (stream_id, version)
    select stream_id, max(stream_version) from public.events
     where event_type in (${sql.join(types)})
       and ${throughCheckpoint(through)}
     group by stream_id`.execute(trx);
}

/**
 * A replay into empty tables (as EMPTY_TABLES) that keeps, in memory, the highest version of
 * each stream it applied, per table, and records them at the end (`recordAll`): an `as_of`
 * view's build. Its replay leaves out the events of a lastWins group a later one of their
 * stream undoes, and the events of a merged run but its last (mergeRuns), never a stream's last
 * of a projector's types, so what it applied holds the versions recordReplayedVersions would
 * read from the log, without reading it again.
 */
export class HighestApplied implements BatchGuard {
  private readonly highest = new Map<string, Map<string, number>>();
  readonly keep = EMPTY_TABLES.keep;

  async record(_trx: Db, table: string, applied: readonly Versioned[]): Promise<void> {
    let streams = this.highest.get(table);
    if (!streams) this.highest.set(table, (streams = new Map()));
    for (const e of applied) if (e.streamVersion > (streams.get(e.streamId) ?? 0)) streams.set(e.streamId, e.streamVersion);
  }

  async recordAll(trx: Db): Promise<void> {
    for (const [table, streams] of this.highest) await recordStreamVersions(trx, table, [...streams].map(([streamId, streamVersion]) => ({ streamId, streamVersion })));
  }
}
