/**
 * Folded stream states kept between commands, so a command need not read its stream. A
 * stale entry is harmless: the append's expected version catches a writer in another
 * process (src/commands/handler.ts). Entries are stored only after their transaction commits.
 */
export interface FoldedStream<S> {
  readonly version: number;
  readonly state: S;
  readonly hash: string;
}

export class StreamStateCache {
  // Keyed by decider too: one stream folds to a state only under its own decider.
  private readonly byDecider = new WeakMap<object, Map<string, FoldedStream<unknown>>>();
  private size = 0;
  private readonly order: { decider: WeakRef<object>; streamId: string }[] = [];

  constructor(private readonly capacity = 20_000) {}

  get<S>(decider: object, streamId: string): FoldedStream<S> | undefined {
    return this.byDecider.get(decider)?.get(streamId) as FoldedStream<S> | undefined;
  }

  set<S>(decider: object, streamId: string, folded: FoldedStream<S>): void {
    let streams = this.byDecider.get(decider);
    if (!streams) this.byDecider.set(decider, (streams = new Map()));
    if (!streams.has(streamId)) {
      this.size += 1;
      this.order.push({ decider: new WeakRef(decider), streamId });
    }
    streams.set(streamId, folded);
    while (this.size > this.capacity) this.evictOldest();
  }

  delete(decider: object, streamId: string): void {
    // The eviction order keeps its entry; evicting an absent stream is a no-op.
    if (this.byDecider.get(decider)?.delete(streamId)) this.size -= 1;
  }

  private evictOldest(): void {
    const oldest = this.order.shift();
    if (!oldest) return;
    const decider = oldest.decider.deref();
    if (decider && this.byDecider.get(decider)?.delete(oldest.streamId)) this.size -= 1;
    else if (!decider) this.size -= 1;
  }
}
