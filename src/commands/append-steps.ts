import type { Db } from '../database.js';
import type { Decider, DomainEvent } from '../domain/decider.js';
import type { AppendInput } from '../eventstore/store.js';
import type { ProjectedEvent, StoredEvent } from '../eventstore/types.js';
import type { Projector } from '../projections/projector.js';
import type { CommandContext, CommandSpec, Outcome } from './handler.js';

/**
 * The steps both write paths take — the ordinary transaction (handler.ts) and the single
 * batch (one-round-trip.ts) — written once, so a field added to one cannot be missed in the
 * other.
 */

/** What appending `decided` at the stream's head writes (either path). */
export function appendInput<E extends DomainEvent>(
  ctx: CommandContext,
  spec: Pick<CommandSpec<unknown, E, unknown>, 'streamId' | 'index' | 'metadata'>,
  decided: readonly E[],
  version: number,
  headHash: string,
): AppendInput {
  return {
    streamId: spec.streamId,
    expectedVersion: version,
    headHash,
    events: decided.map((event) => ({ type: event.type, data: event.data, index: spec.index?.(event) })),
    metadata: spec.metadata,
    occurredAt: ctx.now(),
  };
}

/** The outcome of appending `decided` (stored as `stored`) to a stream folded to `state` at `version`. */
export function outcomeOf<E extends DomainEvent, S>(
  decider: Pick<Decider<unknown, E, S>, 'evolve'>,
  state: S,
  version: number,
  decided: readonly E[],
  stored: readonly StoredEvent[],
): Outcome<S> {
  for (const event of decided) state = decider.evolve(state, event);
  const newVersion = version + decided.length;
  return { result: { state, version: newVersion, events: stored }, head: { version: newVersion, state, hash: stored.at(-1)!.hash } };
}

/** Each event through each projector that handles it, in that order; `applying` hears of each step first. */
export async function runInlineProjections(
  trx: Db,
  projectors: readonly Projector[],
  events: readonly ProjectedEvent[],
  applying?: (projector: Projector, event: ProjectedEvent) => void,
) {
  for (const event of events) {
    for (const projector of projectors) {
      if (!projector.handles.includes(event.type)) continue;
      applying?.(projector, event);
      await projector.apply(event, trx);
    }
  }
}
