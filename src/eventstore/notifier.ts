import { EventEmitter } from 'eventemitter3';
import type pg from 'pg';

export const NOTIFY_CHANNEL = 'forgelog_events';
const COALESCE_MS = 5;

/**
 * "Something was appended" wake-ups: eventemitter3 in-process, PostgreSQL LISTEN/NOTIFY
 * across processes. Only a hint — subscribers also poll.
 */
export class Notifier {
  private readonly emitter = new EventEmitter<{ appended: [] }>();
  private listener: pg.PoolClient | undefined;

  constructor(private readonly pool?: pg.Pool) {}

  async listen(): Promise<void> {
    if (!this.pool || this.listener) return;
    const client = await this.pool.connect();
    client.on('notification', () => this.emitter.emit('appended'));
    client.on('error', () => {});
    await client.query(`listen ${NOTIFY_CHANNEL}`);
    this.listener = client;
  }

  private pending: NodeJS.Timeout | undefined;

  /**
   * Called after a command commits. Wake-ups within a few milliseconds are coalesced into
   * one: under load every subscriber would otherwise run a read per append, and every
   * append would spend a pool connection on NOTIFY.
   */
  appended(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.emitter.emit('appended');
      this.pool?.query(`select pg_notify('${NOTIFY_CHANNEL}', '')`).catch(() => {});
    }, COALESCE_MS);
  }

  onAppended(fn: () => void): () => void {
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
