import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/database/database.js';
import { GENESIS_HASH, eventHash } from '../../src/eventstore/hash.js';
import { appendToStream, readStream } from '../../src/eventstore/store.js';
import type { StoredEvent } from '../../src/eventstore/types.js';

export const OCCURRED_AT = new Date('2026-01-01T00:00:00.000Z');

/** Appends events of the given types at the stream's head, in a transaction of their own. */
export async function append(db: Db, streamId: string, types: string[], data: (type: string, i: number) => unknown = (type, i) => ({ type, i })): Promise<StoredEvent[]> {
  return db.transaction().execute(async (trx) => {
    const head = (await readStream(trx, streamId)).at(-1);
    return appendToStream(trx, {
      streamId,
      expectedVersion: head?.streamVersion ?? 0,
      headHash: head?.hash ?? GENESIS_HASH,
      events: types.map((type, i) => ({ type, data: data(type, i), index: { projectId: 7, targetType: 'Thing', targetId: i } })),
      metadata: { actor_id: 1, request_id: `req-${streamId}`, ip: '127.0.0.1' },
      occurredAt: OCCURRED_AT,
    });
  });
}

/**
 * Inserts one event with a chosen transaction id (the column is only defaulted), hashed
 * like appendToStream does: lets a single-session backend build a log whose gap-free order
 * differs from position order, as concurrent writers produce.
 */
export async function appendWithTransactionId(db: Db, streamId: string, type: string, transactionId: number): Promise<{ globalPosition: string }> {
  const head = (await readStream(db, streamId)).at(-1);
  const streamVersion = (head?.streamVersion ?? 0) + 1;
  const eventId = randomUUID();
  const data = { type };
  const metadata = { actor_id: 2 };
  const hash = eventHash(head?.hash ?? GENESIS_HASH, { streamId, streamVersion, eventId, type, schemaVersion: 1, data, metadata, occurredAt: OCCURRED_AT });
  const { rows } = await sql<{ global_position: string }>`
    insert into events (transaction_id, stream_id, stream_version, event_id, event_type, schema_version, data, metadata, actor_id, occurred_at, hash)
    values (${String(transactionId)}::xid8, ${streamId}, ${streamVersion}, ${eventId}, ${type}, 1, ${JSON.stringify(data)}::jsonb,
            ${JSON.stringify(metadata)}::jsonb, 2, ${OCCURRED_AT.toISOString()}::timestamptz, ${hash})
    returning global_position`.execute(db);
  return { globalPosition: rows[0]!.global_position };
}

/** The log's own tables besides `events`: its seals and its Merkle tree (migration 0057). */
export const LOG_TABLES = ['event_seals', 'log_tree_leaves', 'log_tree_nodes', 'log_tree_heads'] as const;

/**
 * Runs statements with the append-only triggers of the log, its seals and its tree off: how
 * a tamperer owning the tables would (the triggers refuse every UPDATE and DELETE otherwise).
 */
export async function tamper(db: Db, change: (trx: Db) => Promise<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`alter table events disable trigger events_immutable`.execute(trx);
    for (const table of LOG_TABLES) await sql.raw(`alter table ${table} disable trigger ${table}_immutable`).execute(trx);
    await change(trx);
    for (const table of LOG_TABLES) await sql.raw(`alter table ${table} enable trigger ${table}_immutable`).execute(trx);
    await sql`alter table events enable trigger events_immutable`.execute(trx);
  });
}

/** Positions in gap-free order, all committed events. */
export async function gapFreeOrder(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('events').select('global_position').orderBy('transaction_id').orderBy('global_position').execute();
  return rows.map((r) => r.global_position);
}

/** Keeps a copy of the log, its seals and its tree, to undo tampering between tests. */
export async function backupLog(db: Db): Promise<void> {
  for (const table of ['events', ...LOG_TABLES]) {
    await sql.raw(`drop table if exists ${table}_backup`).execute(db);
    await sql.raw(`create table ${table}_backup as select * from ${table}`).execute(db);
  }
}

export async function restoreLog(db: Db): Promise<void> {
  await tamper(db, async (trx) => {
    await sql`delete from events`.execute(trx);
    await sql`insert into events overriding system value select * from events_backup order by global_position`.execute(trx);
    for (const table of LOG_TABLES) {
      await sql.raw(`delete from ${table}`).execute(trx);
      await sql.raw(`insert into ${table} select * from ${table}_backup`).execute(trx);
    }
  });
}

/**
 * Waits until every event appended so far is readable in gap-free order. On a shared
 * PostgreSQL cluster any transaction still running anywhere (another test's database too)
 * holds back the snapshot xmin for a moment.
 */
export async function waitUntilReadable(db: Db, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql<{ ready: boolean }>`
      select coalesce(max(transaction_id) < pg_snapshot_xmin(pg_current_snapshot()), true) as ready from events`.execute(db);
    if (rows[0]!.ready) return;
    if (Date.now() > deadline) throw new Error('events stay unreadable: a transaction is holding back the snapshot xmin');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Empties the log, its seals and its tree, positions and seal ids restarting at 1 (their append-only triggers off meanwhile, as a tamperer would). */
export async function resetLog(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const table of ['events', ...LOG_TABLES]) await sql.raw(`alter table ${table} disable trigger user`).execute(trx);
    await sql.raw(`truncate events, ${LOG_TABLES.join(', ')} restart identity`).execute(trx);
    for (const table of ['events', ...LOG_TABLES]) await sql.raw(`alter table ${table} enable trigger user`).execute(trx);
  });
}
