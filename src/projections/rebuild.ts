import { sql, type Selectable } from 'kysely';
import { holdSessionLock } from '../database/advisory-lock.js';
import type { Db, DatabaseHandle } from '../database/database.js';
import { BELOW_HORIZON, PROJECTED_EVENT_COLUMNS, afterCheckpoint, throughCheckpoint, toLoggedEvent } from '../eventstore/store.js';
import { LOG_START, checkpointOf, type Checkpoint, type LoggedEvent, type ProjectedEvent } from '../eventstore/types.js';
import type { EventsTable } from '../eventstore/tables.js';
import type { MergeRun, Projector } from './projector.js';
import { PageReader, sequencesOf } from './replay-pages.js';
import { EMPTY_TABLES, REPLAY_GUARD, recordReplayedVersions, type BatchGuard } from './stream-versions.js';

/**
 * Rebuild: replay the log from position 0 into fresh shadow tables, then swap them in.
 *
 * Shadow tables live in schema `forgelog_rebuild`, created `like public.<t>` (columns,
 * defaults, checks, then the same constraints and indexes under the same names, the
 * indexes once the bulk phase has loaded the rows). Replay
 * runs with `search_path = forgelog_rebuild, public`, so projector code is unchanged: its
 * unqualified table names hit the shadow tables while `events` still resolves to public.
 *
 * Two phases, so nothing waits on a long transaction (DESIGN.md, "Caveats of the gap-free
 * read": a long write transaction holds back every gap-free reader in the cluster):
 *
 * 1. Bulk: pages of `batchSize` events in gap-free order (transaction_id below the snapshot
 *    xmin), each page its own short transaction per sequence of projectors (replay-pages.ts:
 *    projectors reading no one else's tables replay side by side). Inline writers and the
 *    async worker keep writing the live tables meanwhile; readers see no change. The log
 *    brings each event once, in stream order, to tables that have seen none, so the batch
 *    paths go without their stream-version guard (EMPTY_TABLES, stream-versions.ts); after
 *    the last page, each projection's stream versions are recorded in one statement while
 *    the indexes the bulk phase went without are built.
 * 2. Swap, one short transaction: lock the checkpoint rows (waits for a worker's current
 *    batch), `lock table public.<t> in exclusive mode` (readers continue, inline writers
 *    wait), replay what was committed since the bulk phase's last page, swap the tables and
 *    record the checkpoints with the projector's version.
 *
 * Why this never loses an event:
 * - Inline: after the lock, every writer that touched a live table has committed, and its
 *   events are visible to the swap phase's reads (read committed, no xmin filter). Writers
 *   still to come wait on the lock; when it is released their statements resolve the table
 *   name again and write to the new table. The bulk phase read below the xmin horizon, so
 *   no event behind its last page can still commit.
 * - Async: the swap phase applies only events below the xmin horizon and records the
 *   checkpoint there, so the worker resumes exactly where the rebuild stopped.
 *
 * Rebuilds are serialised (one shadow schema): a session advisory lock on PostgreSQL, the
 * single session on PGlite. A leftover schema (crashed rebuild) is dropped first.
 *
 * Limits: foreign keys, triggers, grants and identity sequences of read tables are not
 * copied (read tables take their ids from events); views on a read table make the swap
 * fail. Sequences owned by serial columns move to the new table.
 */
export interface RebuildOptions {
  onProgress?: (done: number, total: number) => void;
  /** Events per bulk page (default 5000). */
  batchSize?: number;
}

export interface RebuildResult {
  readonly projections: readonly { name: string; version: number; checkpoint: Checkpoint }[];
  /** Handled events replayed. */
  readonly events: number;
  readonly milliseconds: number;
}

export const SHADOW_SCHEMA = 'forgelog_rebuild';
const REBUILD_LOCK = 'rebuild';
const SWAP_ATTEMPTS = 5;

export async function rebuildProjections(
  handle: DatabaseHandle,
  projectors: readonly Projector[],
  opts: RebuildOptions = {},
): Promise<RebuildResult> {
  const started = performance.now();
  if (projectors.length === 0) return { projections: [], events: 0, milliseconds: 0 };
  const batchSize = opts.batchSize ?? 5000;
  const tables = [...new Set(projectors.flatMap((p) => p.tables))].sort();
  const types = [...new Set(projectors.flatMap((p) => p.handles))];
  const release = await takeRebuildLock(handle);
  try {
    const read = (from: Checkpoint) => {
      const page = readEvents(handle.db, from, { types, gapFree: true, limit: batchSize });
      page.catch(() => {}); // awaited below, or abandoned when a step fails
      return page;
    };
    // The count and the first page need no shadow table: they run meanwhile, on other connections.
    const counted = countEvents(handle.db, types);
    counted.catch(() => {});
    const sequences = sequencesOf(projectors);
    const pages = new PageReader(read, batchSize, sequences.length);
    const indexes = await createShadowTables(handle.db, tables);
    const total = await counted;
    let done = 0;
    const progress = (n: number) => {
      done += n;
      opts.onProgress?.(done, Math.max(total, done));
    };
    opts.onProgress?.(0, total);

    // Phase 1: bulk replay, one short transaction per page and sequence of projectors
    // (projectors that read each other's tables); sequences sharing nothing replay side by
    // side, each on its own connection, so that PostgreSQL applies one while Node prepares
    // another. Each page is read once, while the pages before it are being applied.
    const failures: unknown[] = [];
    await Promise.all(
      sequences.map(async (sequence, s) => {
        try {
          for (let i = 0; !pages.stopped; i++) {
            const page = await pages.page(i);
            if (page.length === 0 || pages.stopped) break;
            await inShadow(handle.db, async (trx) => {
              await applyInOrder(sequence, page, trx, EMPTY_TABLES);
            });
            if (pages.applied(i, s)) progress(page.length);
            if (page.length < batchSize) break;
          }
        } catch (error) {
          failures.push(error);
          pages.stop();
        }
      }),
    );
    if (failures.length > 0) throw failures[0];
    const after = pages.end;

    // What the bulk replay left for once it is over, side by side on their own connections:
    // the stream versions its batches did not record, and the indexes it went without.
    const settled = await Promise.allSettled([
      ...projectors.map(async (projector) => {
        const table = versionsLeftToRebuild(projector);
        if (table) await inShadow(handle.db, (trx) => recordReplayedVersions(trx, table, projector.guarded, after));
      }),
      ...indexes.map((index) => sql.raw(index).execute(handle.db)),
    ]);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;

    // Phase 2: catch up and swap in one short transaction (retried if chosen as a deadlock victim).
    let result: RebuildResult['projections'] = [];
    for (let attempt = 1; ; attempt++) {
      try {
        let replayed = 0;
        result = await inShadow(handle.db, async (trx) => {
          const out = await swap(trx, projectors, tables, types, after, batchSize, (n) => (replayed += n));
          return out;
        });
        progress(replayed);
        break;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (attempt >= SWAP_ATTEMPTS || (code !== '40P01' && code !== '40001' && code !== '55P03')) throw error;
      }
    }
    return { projections: result, events: done, milliseconds: Math.round(performance.now() - started) };
  } catch (error) {
    await sql.raw(`drop schema if exists ${SHADOW_SCHEMA} cascade`).execute(handle.db).catch(() => {});
    throw error;
  } finally {
    await release();
  }
}

async function swap(
  trx: Db,
  projectors: readonly Projector[],
  tables: readonly string[],
  types: readonly string[],
  after: Checkpoint,
  batchSize: number,
  replayed: (n: number) => void,
) {
  const names = projectors.map((p) => p.name);
  // Checkpoint rows first, then tables: the worker's batches take them in the same order.
  await sql`select name from public.projection_checkpoints where name in (${sql.join(names)}) order by name for update`.execute(trx);
  await sql.raw(`lock table ${tables.map((t) => `public.${ident(t)}`).join(', ')} in exclusive mode`).execute(trx);
  // Anything below this horizon has committed; async projections stop there.
  const { rows } = await sql<{ horizon: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as horizon`.execute(trx);
  const horizon = BigInt(rows[0]!.horizon);
  const inline = projectors.filter((p) => p.mode === 'inline');
  const async_ = projectors.filter((p) => p.mode !== 'inline');
  for (let from = after; ; ) {
    const events = await readEvents(trx, from, { types, gapFree: false, limit: batchSize });
    await applyInOrder(inline, events, trx);
    const settled = events.filter((e) => BigInt(e.transactionId) < horizon);
    for (const projector of async_) await applyEvents(projector, settled, trx);
    replayed(events.length);
    if (events.length < batchSize) break;
    from = checkpointOf(events.at(-1)!);
  }

  for (const table of tables) {
    const shadow = `${SHADOW_SCHEMA}.${ident(table)}`;
    const owned = await sql<{ seq: string; col: string }>`
      select format('%I.%I', n.nspname, s.relname) as seq, format('%I', a.attname) as col
        from pg_depend d
        join pg_class s on s.oid = d.objid and s.relkind = 'S'
        join pg_namespace n on n.oid = s.relnamespace
        join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
       where d.classid = 'pg_class'::regclass and d.refclassid = 'pg_class'::regclass
         and d.refobjid = ${`public.${ident(table)}`}::regclass and d.deptype = 'a'`.execute(trx);
    // A serial column's sequence would go with the old table: keep it for the new one.
    for (const { seq } of owned.rows) await sql.raw(`alter sequence ${seq} owned by none`).execute(trx);
    await sql.raw(`drop table public.${ident(table)}`).execute(trx);
    await sql.raw(`alter table ${shadow} set schema public`).execute(trx);
    for (const { seq, col } of owned.rows) await sql.raw(`alter sequence ${seq} owned by public.${ident(table)}.${col}`).execute(trx);
  }
  await sql.raw(`drop schema ${SHADOW_SCHEMA}`).execute(trx);

  const inlineAt = await lastEvent(trx, null);
  const asyncAt = await lastEvent(trx, horizon);
  const recorded = [];
  for (const projector of projectors) {
    const checkpoint = projector.mode === 'inline' ? inlineAt : asyncAt;
    await sql`
      insert into public.projection_checkpoints (name, version, transaction_id, global_position, updated_at)
      values (${projector.name}, ${projector.version}, ${checkpoint.transactionId}::xid8, ${checkpoint.globalPosition}::bigint, now())
      on conflict (name) do update set version = excluded.version, transaction_id = excluded.transaction_id,
        global_position = excluded.global_position, updated_at = excluded.updated_at`.execute(trx);
    recorded.push({ name: projector.name, version: projector.version, checkpoint });
  }
  return recorded;
}

/**
 * Fresh shadow tables shaped like the live ones, with the same constraint names, and the
 * statements that create their other indexes under the same names: those are built after
 * the bulk replay, since one build over the loaded rows costs less than keeping every index
 * up to date row by row (the constraints stay: ON CONFLICT needs them).
 */
export async function createShadowTables(db: Db, tables: readonly string[], schema = SHADOW_SCHEMA, options: { unlogged?: boolean } = {}): Promise<string[]> {
  const deferred: string[] = [];
  await db.transaction().execute(async (trx) => {
    await sql.raw(`drop schema if exists ${ident(schema)} cascade`).execute(trx);
    await sql.raw(`create schema ${ident(schema)}`).execute(trx);
    for (const table of tables) {
      const live = `public.${ident(table)}`;
      const shadow = `${ident(schema)}.${ident(table)}`;
      await sql.raw(`create ${options.unlogged ? 'unlogged ' : ''}table ${shadow} (like ${live} including all excluding indexes)`).execute(trx);
      // LIKE … INCLUDING INDEXES would invent new index names; a later migration dropping
      // an index by name must still find it after a rebuild.
      const constraints = await sql<{ name: string; def: string }>`
        select format('%I', conname) as name, pg_get_constraintdef(oid) as def from pg_constraint
         where conrelid = ${live}::regclass and contype in ('p', 'u', 'x') order by conname`.execute(trx);
      for (const c of constraints.rows) await sql.raw(`alter table ${shadow} add constraint ${c.name} ${c.def}`).execute(trx);
      // pg_get_indexdef names the table as format('%I.%I') does.
      const indexes = await sql<{ def: string; on: string }>`
        select pg_get_indexdef(i.indexrelid) as def, format(' ON %I.%I ', 'public', ${table}::text) as on from pg_index i
         where i.indrelid = ${live}::regclass
           and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid and c.conrelid = i.indrelid)`.execute(trx);
      for (const { def, on: target } of indexes.rows) {
        if (!def.includes(target)) throw new Error(`rebuild: cannot copy index of ${table}: ${def}`);
        deferred.push(def.replace(target, ` ON ${shadow} `));
      }
    }
  });
  return deferred;
}

/** Runs `fn` in a transaction whose unqualified table names resolve to the shadow tables (or `schema`'s) first. */
export function inShadow<T>(db: Db, fn: (trx: Db) => Promise<T>, schema = SHADOW_SCHEMA): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('search_path', ${`${ident(schema)}, public`}, true)`.execute(trx);
    return fn(trx);
  });
}

/** Rebuilds of one database queue here in-process (PGlite has no advisory locks to wait on). */
const rebuildsInProcess = new WeakMap<Db, Promise<void>>();

async function takeRebuildLock(handle: DatabaseHandle): Promise<() => Promise<void>> {
  const previous = rebuildsInProcess.get(handle.db) ?? Promise.resolve();
  let releaseLocal!: () => void;
  const mine = new Promise<void>((resolve) => (releaseLocal = resolve));
  const queued = previous.then(() => mine);
  rebuildsInProcess.set(handle.db, queued);
  await previous;
  const releaseInProcess = () => {
    releaseLocal();
    if (rebuildsInProcess.get(handle.db) === queued) rebuildsInProcess.delete(handle.db);
  };
  if (handle.kind !== 'postgres' || !handle.pool) return async () => releaseInProcess();
  let releaseSession: () => Promise<void>;
  try {
    releaseSession = await holdSessionLock(handle.pool, REBUILD_LOCK);
  } catch (error) {
    releaseInProcess();
    throw error;
  }
  return async () => {
    try {
      await releaseSession();
    } finally {
      releaseInProcess();
    }
  };
}

async function countEvents(db: Db, types: readonly string[]): Promise<number> {
  if (types.length === 0) return 0;
  const { rows } = await sql<{ n: string }>`select count(*) as n from public.events where event_type in (${sql.join(types)})`.execute(db);
  return Number(rows[0]!.n);
}

/** The last committed event in gap-free order (below `horizon` when given). */
async function lastEvent(db: Db, horizon: bigint | null): Promise<Checkpoint> {
  const below = horizon === null ? sql`true` : sql`transaction_id < ${horizon.toString()}::xid8`;
  // By the xid8 column (events.…): by the text alias, '999' would sort after '1156'.
  const { rows } = await sql<{ transaction_id: string; global_position: string }>`
    select transaction_id::text as transaction_id, global_position from public.events where ${below}
     order by events.transaction_id desc, events.global_position desc limit 1`.execute(db);
  const row = rows[0];
  return row ? { transactionId: row.transaction_id, globalPosition: String(row.global_position) } : LOG_START;
}

/**
 * What a replay through a fixed position leaves out of the log (an `as_of` view's build):
 * of the events of `lastWins` types (Projector.lastWins), and of the events of `merges` types
 * that merge (Projector.mergeRuns), it reads only those `table` names (keepCompacted), a
 * merged run's last one with its merged field.
 */
export interface Compaction {
  readonly lastWins: readonly string[];
  readonly merges: readonly MergeRun[];
  readonly table: string;
}

/** The declarations every projector handling one of their types makes alike (an event one of them needs whole is read). */
function declaredAlike<D>(projectors: readonly Projector[], declared: (p: Projector) => readonly D[], types: (d: D) => readonly string[], key: (d: D) => string): D[] {
  const all = new Map<string, D>();
  for (const projector of projectors) for (const d of declared(projector)) all.set(key(d), d);
  return [...all]
    .filter(([name, d]) => projectors.every((p) => !types(d).some((type) => p.handles.includes(type)) || declared(p).some((mine) => key(mine) === name)))
    .map(([, d]) => d);
}

/** The lastWins groups a replay by `projectors` may compact. */
export function lastWinsGroups(projectors: readonly Projector[]): string[][] {
  const key = (group: readonly string[]) => [...group].sort().join(' ');
  return declaredAlike(projectors, (p) => p.lastWins ?? [], (group) => group, key).map((group) => [...group].sort());
}

/** The mergeRuns declarations a replay by `projectors` may merge by. */
export function mergeRunsOf(projectors: readonly Projector[]): MergeRun[] {
  const key = (run: MergeRun) => JSON.stringify([run.type, run.field, [...run.except].sort()]);
  return declaredAlike(projectors, (p) => p.mergeRuns ?? [], (run) => [run.type], key);
}

/** Whether an event of a mergeRuns type merges (its field holds no key of `except`). */
const merges = (run: MergeRun) => sql<boolean>`(event_type = ${run.type} and not jsonb_exists_any(coalesce(data->${run.field}, '{}'::jsonb), ${[...run.except]}::text[]))`;

/**
 * Fills `table` (schema-qualified, made by the caller with keptEventsTable) with the events
 * through `through` a compacted replay by `projectors` reads of the types it compacts: each
 * stream's last event of each lastWins group, and the last event of each run of merging
 * events of a stream (no event of their type between that does not merge) with their fields
 * merged. Answers
 * what readEvents needs to read only those, or undefined when `projectors` compact nothing.
 */
export async function keepCompacted(db: Db, table: string, projectors: readonly Projector[], through: Checkpoint): Promise<Compaction | undefined> {
  const groups = lastWinsGroups(projectors);
  const runs = mergeRunsOf(projectors);
  if (groups.length === 0 && runs.length === 0) return undefined;
  if (groups.length > 0) {
    const groupOf = sql.join(groups.map((group, i) => sql`when event_type in (${sql.join(group)}) then ${sql.lit(i)}`), sql` `);
    await sql`
      insert into ${sql.table(table)} (stream_id, stream_version)
      select stream_id, max(stream_version) from public.events
       where event_type in (${sql.join(groups.flat())}) and ${throughCheckpoint(through)}
       group by stream_id, case ${groupOf} end`.execute(db);
  }
  for (const run of runs) {
    // A run: the merging events of a stream after its last event of the type that does not merge.
    await sql`
      insert into ${sql.table(table)} (stream_id, stream_version, field, merged)
      select stream_id, max(stream_version), ${run.field}::text, public.forgelog_jsonb_merge(coalesce(field, '{}'::jsonb) order by stream_version)
        from (select stream_id, stream_version, field, merging, count(*) filter (where not merging) over (partition by stream_id order by stream_version) as run
                from (select stream_id, stream_version, data->${run.field} as field, ${merges(run)} as merging
                        from public.events where event_type = ${run.type} and ${throughCheckpoint(through)}) e) r
       where merging
       group by stream_id, run`.execute(db);
  }
  return { lastWins: groups.flat(), merges: runs, table };
}

/** The table keepCompacted fills. */
export const keptEventsTable = (table: string) =>
  sql`create unlogged table ${sql.table(table)} (stream_id text not null, stream_version integer not null, field text, merged jsonb, primary key (stream_id, stream_version))`;

type EventData = Selectable<EventsTable>['data'];
/** The projected columns but `data`, which a compacted read may merge (mergedData). */
const COLUMNS_BUT_DATA = PROJECTED_EVENT_COLUMNS.filter((column) => column !== 'data');

/**
 * Events after a checkpoint in (transaction_id, global_position) order, optionally only
 * some types, only below the snapshot's xmin (the gap-free horizon) and only up to `through`.
 */
export async function readEvents(
  db: Db,
  after: Checkpoint,
  opts: { types?: readonly string[]; gapFree: boolean; limit: number; through?: Checkpoint; compaction?: Compaction },
): Promise<LoggedEvent[]> {
  if (opts.types && opts.types.length === 0) return [];
  const compaction = opts.compaction;
  let query = db
    .selectFrom('events')
    .select(COLUMNS_BUT_DATA)
    .select(compaction && compaction.merges.length > 0 ? mergedData(compaction) : sql<EventData>`data`.as('data'))
    .where(afterCheckpoint(after));
  if (opts.through) query = query.where(throughCheckpoint(opts.through));
  if (opts.types) query = query.where('event_type', 'in', opts.types);
  if (compaction) {
    const compacted = sql.join([sql`event_type = any(${compaction.lastWins}::text[])`, ...compaction.merges.map(merges)], sql` or `);
    query = query.where(sql<boolean>`(not (${compacted}) or (stream_id, stream_version) in (select stream_id, stream_version from ${sql.table(compaction.table)}))`);
  }
  if (opts.gapFree) query = query.where(BELOW_HORIZON);
  const rows = await query.orderBy('transaction_id').orderBy('global_position').limit(opts.limit).execute();
  return rows.map(toLoggedEvent);
}

/** The event's data, with a merged run's field in place of its last event's own. */
function mergedData(compaction: Compaction) {
  const kept = sql.table(compaction.table);
  return sql<EventData>`case when event_type in (${sql.join(compaction.merges.map((run) => run.type))})
    then coalesce((select jsonb_set(events.data, array[k.field], k.merged) from ${kept} k
                    where k.stream_id = events.stream_id and k.stream_version = events.stream_version and k.merged is not null), data)
    else data end`.as('data');
}

const handledSets = new WeakMap<Projector, ReadonlySet<string>>();

function handledTypes(projector: Projector): ReadonlySet<string> {
  let set = handledSets.get(projector);
  if (!set) handledSets.set(projector, (set = new Set(projector.handles)));
  return set;
}

/** The event types of a page, found once for all the projectors it is applied to (most handle none of them). */
const pageTypes = new WeakMap<readonly ProjectedEvent[], ReadonlySet<string>>();

/** Applies the events a projector handles, in order, keeping the stream versions as `guard` says. */
export async function applyEvents(projector: Projector, events: readonly ProjectedEvent[], trx: Db, guard: BatchGuard = REPLAY_GUARD): Promise<void> {
  let types = pageTypes.get(events);
  if (!types) pageTypes.set(events, (types = new Set(events.map((e) => e.type))));
  if (!projector.handles.some((type) => types.has(type))) return;
  const handles = handledTypes(projector);
  const handled = events.filter((e) => handles.has(e.type));
  if (handled.length === 0) return;
  await projector.applyBatch(handled, trx, guard);
}

/**
 * Applies `events` (in log order) to `projectors` (in their order), a batch to each in turn,
 * with the batch cut after every event one of them reads other projectors' tables at
 * (Projector.readsNow): before such an event is applied, every projector before it has
 * applied the events up to it, as on the inline path, and none has applied a later one.
 */
export async function applyInOrder(projectors: readonly Projector[], events: readonly ProjectedEvent[], trx: Db, guard: BatchGuard = REPLAY_GUARD): Promise<void> {
  const readers = projectors.filter((p) => p.readsNow);
  let from = 0;
  if (readers.length > 0)
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      if (!readers.some((p) => handledTypes(p).has(event.type) && p.readsNow!(event))) continue;
      const part = events.slice(from, i + 1);
      for (const projector of projectors) await applyEvents(projector, part, trx, guard);
      from = i + 1;
    }
  if (from === events.length) return;
  const rest = from === 0 ? events : events.slice(from);
  for (const projector of projectors) await applyEvents(projector, rest, trx, guard);
}

/** The stream versions table (stream-versions.ts) whose recording the bulk replay's batches leave to the rebuild (EMPTY_TABLES). */
function versionsLeftToRebuild(projector: Projector): string | undefined {
  const table = `${projector.name}_stream_versions`;
  return projector.tables.includes(table) ? table : undefined;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
