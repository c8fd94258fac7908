import { LOG_START, checkpointOf, type Checkpoint, type LoggedEvent } from '../eventstore/types.js';
import type { Projector } from './projector.js';

// How a rebuild's bulk replay shares the log's pages among sequences of projectors.

/**
 * Projectors in sequences: a projector joins the sequence of every projector whose tables it
 * reads; the projectors of a sequence keep their order.
 */
export function sequencesOf(projectors: readonly Projector[]): Projector[][] {
  const owner = new Map(projectors.flatMap((p) => p.tables.map((table) => [table, p] as const)));
  const sequence = new Map(projectors.map((p) => [p, [p]]));
  for (const projector of projectors) {
    for (const table of projector.reads ?? []) {
      const a = sequence.get(projector)!;
      const b = sequence.get(owner.get(table) ?? projector)!;
      if (a === b) continue;
      const merged = projectors.filter((p) => a.includes(p) || b.includes(p));
      for (const p of merged) sequence.set(p, merged);
    }
  }
  return [...new Set(sequence.values())];
}

/** How many pages a sequence may get ahead of the slowest (bounds the pages held in memory). */
const PAGES_AHEAD = 2;

/**
 * The log's pages for sequences of projectors that apply them at their own pace. Page i+1
 * (it starts after page i's last event) is read once some sequence has page i; a page is let
 * go once every sequence has applied it.
 */
export class PageReader {
  private readonly pages = new Map<number, { events: Promise<LoggedEvent[]>; pending: number }>();
  private requested = -1;
  private last: Promise<LoggedEvent[] | undefined> = Promise.resolve(undefined);
  private slowest = 0;
  private readonly progress: number[];
  private waiting: (() => void)[] = [];
  /** Where the pages read so far end. */
  end: Checkpoint = LOG_START;
  stopped = false;

  constructor(
    private readonly read: (from: Checkpoint) => Promise<LoggedEvent[]>,
    private readonly batchSize: number,
    sequences: number,
  ) {
    this.progress = new Array<number>(sequences).fill(0);
    this.request(0);
  }

  async page(i: number): Promise<LoggedEvent[]> {
    while (i > this.slowest + PAGES_AHEAD && !this.stopped) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.request(i + 1);
    return this.pages.get(i)?.events ?? [];
  }

  /** Sequence `s` applied page i; true when it was the last to. */
  applied(i: number, s: number): boolean {
    this.progress[s] = i + 1;
    const entry = this.pages.get(i)!;
    if (--entry.pending > 0) return false;
    this.pages.delete(i);
    this.slowest = Math.min(...this.progress);
    this.wake();
    return true;
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  private request(i: number): void {
    while (this.requested < i) {
      // Each page starts where the one before ended (the first at the log's start).
      const before = this.last;
      const events = before.then((previous) => {
        if (previous !== undefined && previous.length < this.batchSize) return [];
        return this.read(previous === undefined ? LOG_START : checkpointOf(previous.at(-1)!)).then((page) => {
          if (page.length > 0) this.end = checkpointOf(page.at(-1)!);
          return page;
        });
      });
      events.catch(() => {}); // awaited by page(), or abandoned when a sequence failed
      this.last = events;
      this.pages.set(++this.requested, { events, pending: this.progress.length });
    }
  }
}
