import type { StoredEvent } from '../../eventstore/types.js';
import type { CommandContext } from './context.js';

/**
 * An async subscriber that issues commands (a process manager): asynchronous removals,
 * fan-out, outbound notifications. The worker (src/worker/runner.ts) follows the log for it
 * from its checkpoint and hands it the command context. Idempotent on the triggering event id.
 */
export interface Reactor<Context = CommandContext> {
  readonly name: string;
  readonly handles: readonly string[];
  /** Where a reactor without a checkpoint starts: the whole log (default) or what comes next. */
  readonly startAt?: 'log-start' | 'head';
  react(event: StoredEvent, context: Context): Promise<void>;
  /**
   * Whether reacting to an event would do nothing, told from the event alone (its type and
   * data, nothing read): the worker moves past such an event without a reaction and without a
   * receipt. A rewind finds the same answer, so it changes nothing a receipt would have kept.
   */
  ignores?(event: StoredEvent): boolean;
}
