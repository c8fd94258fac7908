import { LruMap } from '../../lru.js';

/**
 * Folded stream states kept between commands, so a command need not read its stream. A
 * stale entry is harmless: the append's expected version catches a writer in another
 * process (src/commands/kernel/handler.ts). Entries are stored only after their transaction commits.
 */
export interface FoldedStream<S> {
  readonly version: number;
  readonly state: S;
  readonly hash: string;
}

/**
 * At most this many folded streams per process (README: Memory), the least recently used
 * forgotten first: a forgotten stream is read and folded again by its next command.
 */
export const STREAM_CACHE_CAPACITY = 5_000;

export class StreamStateCache {
  private readonly streams: LruMap<string, FoldedStream<unknown>>;
  // Keyed by decider too: one stream folds to a state only under its own decider.
  private readonly deciderIds = new WeakMap<object, number>();
  private nextDeciderId = 0;

  constructor(capacity = STREAM_CACHE_CAPACITY) {
    this.streams = new LruMap(capacity);
  }

  get size(): number {
    return this.streams.size;
  }

  get<S>(decider: object, streamId: string): FoldedStream<S> | undefined {
    return this.streams.get(this.key(decider, streamId)) as FoldedStream<S> | undefined;
  }

  set<S>(decider: object, streamId: string, folded: FoldedStream<S>): void {
    this.streams.set(this.key(decider, streamId), folded);
  }

  delete(decider: object, streamId: string): void {
    this.streams.delete(this.key(decider, streamId));
  }

  private key(decider: object, streamId: string): string {
    let id = this.deciderIds.get(decider);
    if (id === undefined) this.deciderIds.set(decider, (id = ++this.nextDeciderId));
    return `${id}:${streamId}`;
  }
}
