import { EventEmitter } from 'eventemitter3';
import type pg from 'pg';

export const NOTIFY_CHANNEL = 'forgelog_events';
/** Wake-ups that are not appends (e.g. "deliveries recorded"): the topic is the payload. */
export const SIGNAL_CHANNEL = 'forgelog_signals';
const COALESCE_MS = 5;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * "Something was appended" wake-ups, with the event types when they are known:
 * eventemitter3 in-process, PostgreSQL LISTEN/NOTIFY across processes (the types as the
 * payload). Only a hint — subscribers also poll — so a follower may sleep through the
 * wake-ups of types it does not read.
 */
export class Notifier {
  private readonly emitter = new EventEmitter<{ appended: [types: readonly string[] | undefined] }>();
  private readonly signals = new EventEmitter<Record<string, []>>();
  /** Synchronous: this process's commits as they return. */
  private readonly local = new EventEmitter<{ committed: [types: readonly string[] | undefined] }>();
  private listener: pg.PoolClient | undefined;
  private started = false;
  private reconnect: NodeJS.Timeout | undefined;
  private reconnectDelayMs = RECONNECT_MIN_MS;

  /**
   * The backends of this process's NOTIFYs: PostgreSQL delivers a notification to every
   * listener, its sender's too, and this process has woken its own subscribers already.
   * A backend leaves the set with its connection, before its process id can be another's.
   */
  private readonly ownBackends = new Set<number>();

  constructor(
    private readonly pool?: pg.Pool,
    private readonly log?: NotifierLog,
  ) {
    pool?.on('remove', (client) => this.ownBackends.delete((client as { processID?: number }).processID ?? 0));
  }

  /** NOTIFY on a connection of the pool, whose backend is then known as this process's own. */
  private notify(channel: string, payload: string): void {
    const pool = this.pool;
    if (!pool) return;
    pool.connect().then(
      (client) => {
        const pid = (client as { processID?: number }).processID;
        if (pid !== undefined) this.ownBackends.add(pid);
        client.query('select pg_notify($1, $2)', [channel, payload]).then(
          () => client.release(),
          (error: Error) => client.release(error),
        );
      },
      () => {},
    );
  }

  /**
   * LISTENs on a connection of its own. When that connection drops (a restart,
   * pg_terminate_backend) it connects again with back-off. Each time it comes or goes every
   * subscriber is woken (appends with "any type", every signal topic).
   */
  async listen(): Promise<void> {
    if (!this.pool || this.started) return;
    this.started = true;
    try {
      await this.connectListener();
    } catch (error) {
      this.started = false;
      throw error;
    }
  }

  private async connectListener(): Promise<void> {
    const client = await this.pool!.connect();
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (this.listener === client) {
        this.listener = undefined;
        this.listeningChanged();
      }
      client.removeListener('notification', onNotification);
      client.release(true);
      if (!this.started) return;
      this.log?.warn({ err: error }, 'the LISTEN connection was lost; reconnecting');
      this.scheduleReconnect();
    };
    const onNotification = (message: pg.Notification) => {
      if (this.ownBackends.has(message.processId)) return;
      if (message.channel === SIGNAL_CHANNEL) this.signals.emit(message.payload ?? '');
      else this.emitter.emit('appended', message.payload ? message.payload.split(',') : undefined);
    };
    client.on('notification', onNotification);
    const onEnd = () => onLost();
    client.once('error', onLost);
    client.once('end', onEnd);
    try {
      await client.query(`listen ${NOTIFY_CHANNEL}`);
      await client.query(`listen ${SIGNAL_CHANNEL}`);
    } catch (error) {
      if (!lost) {
        lost = true;
        client.removeListener('notification', onNotification);
        client.release(true);
      }
      throw error;
    }
    if (lost) throw new Error('the LISTEN connection was lost while connecting');
    const detach = () => {
      lost = true;
      client.removeListener('notification', onNotification);
      client.removeListener('error', onLost);
      client.removeListener('end', onEnd);
    };
    // Closed while reconnecting: a client kept here would hold the pool's end() forever.
    if (!this.started) {
      detach();
      client.release(true);
      return;
    }
    this.listener = client;
    this.detach = detach;
    this.listeningChanged();
  }

  /**
   * The LISTEN connection came or went: whoever waits on a wake-up looks now — what was
   * notified while nobody listened is lost, and a loop that waits longer while this process
   * hears every append (runtime.ts, idleWait) must choose its wait again.
   */
  private listeningChanged(): void {
    this.emitter.emit('appended', undefined);
    for (const topic of this.signals.eventNames()) this.signals.emit(topic);
  }

  /**
   * Whether this process hears every other process's appends now (its LISTEN connection is
   * up). Notifications sent while it was down are lost: every subscriber is woken when it changes.
   */
  get listening(): boolean {
    return this.listener !== undefined;
  }

  /**
   * Calls `fn` synchronously with the types of each commit of this process (undefined: not
   * known), before its request is answered (the coalesced `onAppended` comes a few
   * milliseconds later).
   */
  onCommitted(fn: (types: readonly string[] | undefined) => void): () => void {
    this.local.on('committed', fn);
    return () => this.local.off('committed', fn);
  }

  private detach: (() => void) | undefined;

  private scheduleReconnect(): void {
    if (!this.started || this.reconnect) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(delay * 2, RECONNECT_MAX_MS);
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      if (!this.started) return;
      this.connectListener().then(
        () => {
          this.reconnectDelayMs = RECONNECT_MIN_MS;
          if (!this.started) return;
          this.log?.info({}, 'the LISTEN connection is back');
        },
        () => this.scheduleReconnect(),
      );
    }, delay);
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
  appended(given?: Iterable<string>): void {
    const types = given === undefined ? undefined : [...given];
    this.local.emit('committed', types);
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
      this.notify(NOTIFY_CHANNEL, payload.length < 7900 ? payload : '');
    }, COALESCE_MS);
  }

  /** Calls `fn` on each wake-up with the types appended, or undefined when they are not known. */
  onAppended(fn: (types: readonly string[] | undefined) => void): () => void {
    this.emitter.on('appended', fn);
    return () => this.emitter.off('appended', fn);
  }

  /**
   * Wakes the subscribers of `topic`, in this process at once and in the others through
   * NOTIFY (a hint, like `appended`: subscribers poll too).
   */
  signal(topic: string): void {
    this.signals.emit(topic);
    this.notify(SIGNAL_CHANNEL, topic);
  }

  /** Calls `fn` on each `signal(topic)`, from any process. */
  onSignal(topic: string, fn: () => void): () => void {
    this.signals.on(topic, fn);
    return () => this.signals.off(topic, fn);
  }

  async close(): Promise<void> {
    this.started = false;
    clearTimeout(this.reconnect);
    this.reconnect = undefined;
    clearTimeout(this.pending);
    this.pending = undefined;
    this.emitter.removeAllListeners();
    this.signals.removeAllListeners();
    this.local.removeAllListeners();
    const client = this.listener;
    this.listener = undefined;
    if (client) {
      this.detach?.();
      this.detach = undefined;
      try {
        await client.query(`unlisten ${NOTIFY_CHANNEL}`);
        await client.query(`unlisten ${SIGNAL_CHANNEL}`);
        client.release();
      } catch {
        client.release(true);
      }
    }
  }
}

/** Where the notifier says that its LISTEN connection was lost and is back (a pino logger). */
export interface NotifierLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}
