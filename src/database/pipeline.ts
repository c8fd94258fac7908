import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { type BatchStatement, isConnectionError, type StatementNames } from './pg-client.js';

/**
 * The plain reads sent outside a transaction — nearly every statement of a GET — pipelined on
 * a few connections of their own instead of taking a pooled connection each.
 *
 * Why: on this machine a round trip to an idle PostgreSQL backend costs Node most of what a
 * short read costs, in the socket write that wakes the backend (a branch list's profile: 30 %
 * of forgelog's CPU in `writev`, one per statement). Pipelined, each statement is still its
 * own implicit transaction (its own Sync: an error fails it alone), but the statements the
 * requests send in one turn of the event loop go out in one write to one backend that is
 * already awake, and come back in one read (a scratch test: 0.090 → 0.033 ms of CPU per
 * statement beside 0.25 ms of other work).
 *
 * A statement waits behind those written before it on its connection, so the connections are
 * chosen by how many statements each has in flight. Everything else — transactions, writes,
 * what a connection remembers between statements — takes a pooled connection as before
 * (pipelinedPool).
 */
export class Pipeline {
  private readonly slots: Slot[] = [];
  private ended = false;

  constructor(
    private readonly settings: pg.ClientConfig,
    private readonly size: number,
    private readonly names?: StatementNames,
  ) {}

  /** Sends one statement; its result, or its error. */
  query(text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    return this.send((client) => client.query(text, values as unknown[]));
  }

  /**
   * Reads that see one snapshot (readTogether): sent one after another on one connection inside
   * a read-only repeatable-read transaction, with nothing of other requests between them. Each
   * statement's result, or the first error.
   */
  batch(statements: readonly BatchStatement[]): Promise<pg.QueryResult[]> {
    return this.send(async (client) => {
      const sent = [
        client.query(SNAPSHOT),
        ...statements.map((statement) => client.query(statement.sql, statement.parameters as unknown[])),
        client.query('commit'),
      ];
      // Every one is awaited, so that none fails unheard; the first error is the batch's.
      const settled = await Promise.allSettled(sent);
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
      return settled.slice(1, -1).map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value);
    });
  }

  private async send<T>(write: (client: pg.Client) => Promise<T>): Promise<T> {
    const slot = this.pick();
    slot.inFlight++;
    try {
      // The statements sent to a connection in this turn of the event loop go out together when it ends.
      if (!slot.corked) {
        slot.corked = true;
        const stream = slot.connected && (slot.connected as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
        if (stream) stream.cork();
        setImmediate(() => {
          slot.corked = false;
          if (stream) stream.uncork();
        });
      }
      return await write(slot.connected ?? (await slot.ready));
    } catch (error) {
      // The first of its statements to hear that the connection is gone retires it (pg tells its 'end' later).
      if (isConnectionError(error)) this.drop(slot);
      throw error;
    } finally {
      slot.inFlight--;
    }
  }

  /** Connections open now (the tests read it). */
  get open(): number {
    return this.slots.length;
  }

  async end(): Promise<void> {
    this.ended = true;
    await Promise.all(this.slots.splice(0).map((slot) => slot.ready.then((client) => client.end()).catch(() => {})));
  }

  /**
   * The connection this turn's statements already go to while it has fewer than BATCH in
   * flight; else an idle one, a new one while there are fewer than `size`, or the least busy.
   */
  private pick(): Slot {
    if (this.ended) throw new Error('Cannot use a pool after calling end on the pool');
    let best: Slot | undefined;
    for (const slot of this.slots) {
      if (slot.corked && slot.inFlight < BATCH) return slot;
      if (!best || slot.inFlight < best.inFlight) best = slot;
    }
    if (best && (best.inFlight === 0 || this.slots.length >= this.size)) return best;
    return this.connect();
  }

  private drop(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    slot.ready.then((client) => client.end()).catch(() => {});
  }

  private connect(): Slot {
    const client = new pg.Client({ ...this.settings, pipeline: true } as pg.ClientConfig);
    this.names?.wrap(client);
    const slot: Slot = { ready: Promise.resolve(client), connected: undefined, inFlight: 0, corked: false };
    const drop = () => this.drop(slot);
    // A dropped connection fails its statements in flight (each answers 503: isConnectionError);
    // the next statement opens another.
    client.on('error', drop);
    client.on('end', drop);
    slot.ready = client.connect().then(
      () => (slot.connected = client),
      (error: unknown) => {
        drop();
        throw error;
      },
    );
    this.slots.push(slot);
    return slot;
  }
}

const SNAPSHOT = 'begin isolation level repeatable read, read only';

/** How many statements may wait on one connection before the next goes to another. */
const BATCH = 16;

interface Slot {
  ready: Promise<pg.Client>;
  /** The client once connected; until then statements wait for `ready`, and the turn's are not corked. */
  connected: pg.Client | undefined;
  inFlight: number;
  corked: boolean;
}

/**
 * What kysely's PostgresDialect is given as its pool: a checkout sends its statements to the
 * pipeline while they are plain reads — a `select` that locks no row and leaves nothing on its
 * connection (a session advisory lock, as kysely's Migrator takes inside `db.connection()`; a
 * setting). From its first other statement (a `begin`, a write, a COPY) until it is released it
 * holds a connection of `pool`. A write outside a transaction may wait for a row lock, and on
 * the pipeline the statements behind it would wait too — among them, perhaps, one that the
 * lock's holder is waiting for, a deadlock PostgreSQL cannot see. A plain read waits for no
 * lock but a table's ACCESS EXCLUSIVE one (a migration, a rebuild's swap).
 */
export function pipelinedPool(pool: pg.Pool, pipeline: Pipeline): PostgresPool {
  return {
    connect: async () => new Checkout(pool, pipeline) as unknown as PostgresPoolClient,
    end: async () => {
      try {
        await pipeline.end();
      } finally {
        await pool.end();
      }
    },
  };
}

const READ = /^\s*select\b/i;
const NOT_PLAIN = /\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b|\bpg_(try_)?advisory_|\bset_config\s*\(/i;
const plainRead = (config: unknown): config is string => typeof config === 'string' && READ.test(config) && !NOT_PLAIN.test(config);

class Checkout {
  private held: pg.PoolClient | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly pipeline: Pipeline,
  ) {}

  async query(config: unknown, values?: readonly unknown[]): Promise<pg.QueryResult> {
    if (!this.held && plainRead(config)) return this.pipeline.query(config, values ?? []);
    this.held ??= await this.pool.connect();
    return this.held.query(config as string, values as unknown[]);
  }

  release(): void {
    const held = this.held;
    this.held = undefined;
    held?.release();
  }
}
