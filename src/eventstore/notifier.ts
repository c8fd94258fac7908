import { EventEmitter } from 'eventemitter3';
import type pg from 'pg';

export const NOTIFY_CHANNEL = 'forgelog_events';
const COALESCE_MS = 5;

/**
 * "Something was appended" wake-ups, with the event types when they are known:
 * eventemitter3 in-process, PostgreSQL LISTEN/NOTIFY across processes (the types as the
 * payload). Only a hint — subscribers also poll — so a follower may sleep through the
 * wake-ups of types it does not read.
 */
export class Notifier {
  private readonly emitter = new EventEmitter<{ appended: [types: readonly string[] | undefined] }>();
  private listener: pg.PoolClient | undefined;

  constructor(private readonly pool?: pg.Pool) {}

  async listen(): Promise<void> {
    if (!this.pool || this.listener) return;
    const client = await this.pool.connect();
    client.on('notification', (message) => this.emitter.emit('appended', message.payload ? message.payload.split(',') : undefined));
    client.on('error', () => {});
    await client.query(`listen ${NOTIFY_CHANNEL}`);
    this.listener = client;
  }

  private pending: NodeJS.Timeout | undefined;
  /** The types appended since the last wake-up; undefined once an append did not say. */
  private pendingTypes: Set<string> | undefined = new Set();

  /**
   * Called after a command commits, with the types it appended (none given: any type).
   * Wake-ups within a few milliseconds are coalesced into one: under load every subscriber
   * would otherwise run a read per append, and every append would spend a pool connection
   * on NOTIFY.
   */
  appended(types?: Iterable<string>): void {
    if (types === undefined) this.pendingTypes = undefined;
    else if (this.pendingTypes) for (const type of types) this.pendingTypes.add(type);
    if (this.pending) return;
    this.pending = setTimeout(() => {
      const appended = this.pendingTypes ? [...this.pendingTypes] : undefined;
      this.pending = undefined;
      this.pendingTypes = new Set();
      this.emitter.emit('appended', appended);
      // NOTIFY payloads stop short of 8000 bytes: a longer list says "any type".
      const payload = appended?.join(',') ?? '';
      this.pool?.query('select pg_notify($1, $2)', [NOTIFY_CHANNEL, payload.length < 7900 ? payload : '']).catch(() => {});
    }, COALESCE_MS);
  }

  /** Calls `fn` on each wake-up with the types appended, or undefined when they are not known. */
  onAppended(fn: (types: readonly string[] | undefined) => void): () => void {
    this.emitter.on('appended', fn);
    return () => this.emitter.off('appended', fn);
  }

  async close(): Promise<void> {
    clearTimeout(this.pending);
    this.pending = undefined;
    this.emitter.removeAllListeners();
    if (this.listener) {
      this.listener.removeAllListeners('notification');
      try {
        await this.listener.query(`unlisten ${NOTIFY_CHANNEL}`);
      } catch {}
      this.listener.release();
      this.listener = undefined;
    }
  }
}
