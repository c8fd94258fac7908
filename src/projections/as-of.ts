import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db, DatabaseHandle } from '../database/database.js';
import { BELOW_HORIZON } from '../eventstore/store.js';
import { checkpointOf, type Checkpoint } from '../eventstore/types.js';
import type { Projector } from './projector.js';
import { applyInOrder, createShadowTables, keepCompacted, keptEventsTable, readEvents } from './rebuild.js';
import { PageReader } from './replay-pages.js';
import { HighestApplied } from './stream-versions.js';

/**
 * The read tables as they stood when the log ended at a position (issue 25 §3: `as_of`, a
 * forgelog extension, docs/log-evidence.md).
 *
 * A view is a schema of its own holding a copy of every projector's table, replayed from the
 * log's start through the event at that position, and a view `events` of the log through it.
 * A request reads it with the schema first on its search path: every query of the API,
 * authorization's included, resolves its unqualified table names there, and what the log does
 * not hold (git objects, which are content-addressed; integrations' secrets; uploads) is read
 * as it is now. Nothing of the live tables is touched, and ordinary requests pay nothing.
 *
 * Building costs a replay of the log up to the position, in pages of short transactions (a
 * progress line per page in the log), less the events a later one of the same stream undoes
 * (Projector.lastWins: of a status set a thousand times, only the last) and with a run of
 * partial updates of a stream replayed as one (Projector.mergeRuns: profile edits, their
 * changes merged), each page applied as a rebuild applies it (applyInOrder). The views of the
 * last few positions read are kept, and readers of one position wait for one build. The
 * empty tables (about ninety, unlogged, with their indexes: seconds of DDL on a busy server,
 * whatever the position) are made ahead: after a view's first read, a spare schema of them
 * is made for the next build, which renames it to its own.
 */

/** Views kept at once; the least recently read one is dropped first, once no request reads it. */
const KEPT_VIEWS = 4;
/** A view unread this long is dropped. */
const IDLE_MS = 10 * 60_000;
/** A view is made again after this long, so that no schema lives for days (see sweep). */
const LIFETIME_MS = 60 * 60_000;
/** Events per page of a build. */
const PAGE = 2000;
/** Schemas of views named for their position, their creation time in seconds, and a random suffix. */
const PREFIX = 'forgelog_as_of_';
/** The spare's schema: its creation time in seconds and a random suffix (not PREFIX's: it is no position's view yet). */
const SPARE_PREFIX = 'forgelog_spare_as_of_';
/** A build's list of the events of lastWins groups it replays (keepLastOfGroups), a table of the view's schema. */
const KEPT_TABLE = 'forgelog_kept_events';

interface View {
  readonly schema: string;
  readonly built: Promise<void>;
  readonly createdAt: number;
  readers: number;
  lastRead: number;
}

export class AsOfViews {
  private readonly views = new Map<string, View>();
  private swept: Promise<void> | undefined;
  /** The empty tables the next build takes (its schema's name), being made or made; undefined when none is. */
  private spare: Promise<string | undefined> | undefined;
  private closed = false;

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly projectors: readonly Projector[],
    private readonly logger: Logger,
  ) {}

  /**
   * The checkpoint of the event at `position` if it is one the gap-free read sees (committed,
   * with nothing older still running), else undefined.
   */
  async checkpointAt(position: string): Promise<Checkpoint | undefined> {
    const row = await this.handle.db
      .selectFrom('events')
      .select(['transaction_id', 'global_position'])
      .where('global_position', '=', position)
      .where(BELOW_HORIZON)
      .executeTakeFirst();
    return row ? checkpointOf({ transactionId: row.transaction_id, globalPosition: row.global_position }) : undefined;
  }

  /** Runs `read` in a read-only transaction whose tables are those at `checkpoint`. */
  async read<T>(checkpoint: Checkpoint, read: (trx: Db) => Promise<T>): Promise<T> {
    const view = await this.acquire(checkpoint);
    try {
      return await this.handle.db.transaction().execute(async (trx) => {
        await sql`select set_config('transaction_read_only', 'on', true), set_config('search_path', ${`${view.schema}, public`}, true)`.execute(trx);
        return read(trx);
      });
    } finally {
      // The next build's tables are made after this read, not beside it.
      this.prepareSpare();
      view.readers -= 1;
      view.lastRead = Date.now();
      // An idle view goes even if no other as_of read comes to evict it.
      setTimeout(() => this.evict(Date.now(), KEPT_VIEWS), IDLE_MS + 1000).unref();
    }
  }

  /** Resolves once the next build's tables are made, if they are being made (the bench waits for them between reads). */
  async spareMade(): Promise<void> {
    await this.spare;
  }

  /** Drops every view this process made. */
  async close(): Promise<void> {
    this.closed = true;
    const views = [...this.views.values()];
    this.views.clear();
    const spare = this.spare;
    this.spare = undefined;
    await Promise.allSettled([...views.map((view) => this.drop(view)), spare?.then((schema) => (schema ? this.dropSchema(schema) : undefined))]);
  }

  private async acquire(checkpoint: Checkpoint): Promise<View> {
    const key = checkpoint.globalPosition;
    const now = Date.now();
    let view = this.views.get(key);
    if (view && now - view.createdAt > LIFETIME_MS && view.readers === 0) {
      this.views.delete(key);
      void this.drop(view);
      view = undefined;
    }
    if (!view) {
      // The first build sweeps what an earlier process left. The reads that waited for it look
      // again, so that concurrent reads of one position build one view.
      await (this.swept ??= this.sweep());
      view = this.views.get(key);
    }
    if (!view) {
      this.evict(now);
      const schema = `${PREFIX}${key}_${Math.floor(now / 1000)}_${randomBytes(3).toString('hex')}`;
      const built = this.build(schema, checkpoint);
      view = { schema, built, createdAt: now, readers: 0, lastRead: now };
      this.views.set(key, view);
      built.catch(() => {
        if (this.views.get(key) === view) this.views.delete(key);
      });
    } else {
      // Most recently read last: the map's order is the eviction order.
      this.views.delete(key);
      this.views.set(key, view);
    }
    view.readers += 1;
    try {
      await view.built;
    } catch (error) {
      view.readers -= 1;
      throw error;
    }
    return view;
  }

  /** Drops idle views, and the least recently read ones beyond `keep` (room for one more by default). */
  private evict(now: number, keep = KEPT_VIEWS - 1) {
    let excess = this.views.size - keep;
    for (const [key, view] of this.views) {
      if (view.readers > 0) continue;
      if (excess > 0 || now - view.lastRead > IDLE_MS) {
        this.views.delete(key);
        excess -= 1;
        void this.drop(view);
      }
    }
  }

  private async drop(view: View) {
    await view.built.catch(() => {});
    await this.dropSchema(view.schema);
  }

  private async dropSchema(schema: string) {
    await sql.raw(`drop schema if exists "${schema}" cascade`).execute(this.handle.db).catch((error: unknown) => {
      this.logger.warn({ err: error, schema }, 'could not drop an as_of view');
    });
  }

  private get tables(): string[] {
    return [...new Set(this.projectors.flatMap((p) => p.tables))].sort();
  }

  /**
   * A view's empty tables in `schema` (unlogged: nothing of a view needs to survive a crash),
   * and the build's list of the events it keeps; answers the statements that make their
   * indexes.
   */
  private async createTables(schema: string): Promise<string[]> {
    const indexes = await createShadowTables(this.handle.db, this.tables, schema, { unlogged: true });
    await keptEventsTable(`${schema}.${KEPT_TABLE}`).execute(this.handle.db);
    return indexes;
  }

  /** Makes the next build's empty tables, with their indexes, in the background (one at a time). */
  private prepareSpare() {
    if (this.closed || this.spare) return;
    const schema = `${SPARE_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(3).toString('hex')}`;
    this.spare = (async () => {
      try {
        for (const index of await this.createTables(schema)) await sql.raw(index).execute(this.handle.db);
        return schema;
      } catch (error) {
        if (!this.closed) this.logger.warn({ err: error, schema }, 'could not make the tables of the next as_of view');
        await sql.raw(`drop schema if exists "${schema}" cascade`).execute(this.handle.db).catch(() => {});
        return undefined;
      }
    })();
  }

  /** The spare's schema (its tables have their indexes) once it is made, if one is made or being made; the build renames it to its own. */
  private async takeSpare(): Promise<string | undefined> {
    const spare = this.spare;
    this.spare = undefined;
    return spare;
  }

  /**
   * Schemas of views a process left behind (a crash): on the embedded database every one (it
   * is this process's alone), on PostgreSQL those older than a day (another process's views
   * live an hour at most).
   */
  private async sweep() {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_namespace where nspname like ${`${PREFIX}%`} or nspname like ${`${SPARE_PREFIX}%`}`.execute(this.handle.db);
    const dayAgo = Date.now() / 1000 - 86_400;
    for (const { name } of rows) {
      const created = Number(name.split('_').at(-2));
      if (this.handle.kind === 'pglite' || !(created > dayAgo)) await sql.raw(`drop schema if exists "${name}" cascade`).execute(this.handle.db);
    }
  }

  private async build(schema: string, through: Checkpoint): Promise<void> {
    const started = performance.now();
    const db = this.handle.db;
    const types = [...new Set(this.projectors.flatMap((p) => p.handles))];
    const kept = `${schema}.${KEPT_TABLE}`;
    const spare = await this.takeSpare();
    try {
      // The spare's tables, indexed already; else made here, their indexes built after the replay (cheaper over many rows).
      const indexes = spare ? [] : await this.createTables(schema);
      const compaction = await inView(db, schema, async (trx) => {
        if (spare) await sql.raw(`alter schema "${spare}" rename to "${schema}"`).execute(trx);
        // The log as it ended, for the reads of the log itself (feeds, resource events, system notes)
        // and for the projectors that look at it while they replay. Both values are digits.
        await sql.raw(`create view "${schema}".events as select * from public.events where (transaction_id, global_position) <= ('${through.transactionId}'::xid8, ${through.globalPosition})`).execute(trx);
        // Of a stream's events of a lastWins group only the last is replayed (a status set 10,000 times is set
        // once), and a run of profile edits as one edit (Projector.lastWins, Projector.mergeRuns).
        return keepCompacted(trx, kept, this.projectors, through);
      });
      let events = 0;
      const versions = new HighestApplied();
      // The next page is read while one is applied.
      const pages = new PageReader((from) => readEvents(db, from, { types, gapFree: false, limit: PAGE, through, ...(compaction ? { compaction } : {}) }), PAGE, 1);
      try {
        for (let i = 0; ; i++) {
          const page = await pages.page(i);
          if (page.length === 0) break;
          await inView(db, schema, async (trx) => {
            await applyInOrder(this.projectors, page, trx, versions);
          });
          pages.applied(i, 0);
          events += page.length;
          this.logger.info({ as_of: through.globalPosition, events, events_per_s: Math.round(events / ((performance.now() - started) / 1000)) }, 'building an as_of view');
        }
      } finally {
        pages.stop();
      }
      await inView(db, schema, (trx) => versions.recordAll(trx));
      for (const index of indexes) await sql.raw(index).execute(db);
      this.logger.info({ as_of: through.globalPosition, events, duration_ms: Math.round(performance.now() - started) }, 'built an as_of view');
    } catch (error) {
      await sql.raw(`drop schema if exists "${schema}" cascade`).execute(db).catch(() => {});
      if (spare) await this.dropSchema(spare);
      throw error;
    }
  }
}

/**
 * A transaction of a build: the view's tables first on the search path, and no wait for the
 * WAL to reach the disk (a view a crash loses is built again; its tables are unlogged anyway).
 */
function inView<T>(db: Db, schema: string, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('search_path', ${`"${schema}", public`}, true), set_config('synchronous_commit', 'off', true)`.execute(trx);
    return fn(trx);
  });
}
