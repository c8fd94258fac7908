import { EventEmitter } from 'eventemitter3';
import type pg from 'pg';

export const NOTIFY_CHANNEL = 'forgelog_events';

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

  /** Called after a command commits. */
  appended(): void {
    this.emitter.emit('appended');
    this.pool?.query(`select pg_notify('${NOTIFY_CHANNEL}', '')`).catch(() => {});
  }

  onAppended(fn: () => void): () => void {
    this.emitter.on('appended', fn);
    return () => this.emitter.off('appended', fn);
  }

  async close(): Promise<void> {
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
