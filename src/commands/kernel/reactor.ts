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
}
