import type { ClaimChanges, ClaimRefusal, Decider } from './decider.js';
import { eventTypesOf, type EventOf, type EventSchemas, type FeedIndex, type Upcasters } from './events.js';

/**
 * One aggregate, defined once, in its domain file: its stream, its events, its decider, the
 * claims and feed index of its events, and where its new ids come from. The list of them
 * (src/domain/aggregates.ts) is what the kernel derives the rest from: the event union, the
 * event store's types and upcasters, the projector and reactor checks. The command kernel
 * runs a command on one (src/commands/kernel/run.ts):
 *
 *   export const members = defineAggregate({ name: 'members', streamId: membersStreamId,
 *     events: memberEvents, decider: membersDecider, index: memberEventIndex });
 *
 *   await run(w, members, source, { type: 'AddMember', … });
 */
export interface AggregateDefinition<Key, Command, Schemas extends EventSchemas, State> {
  /** Names the projector that keeps its read tables, and their `<name>_stream_versions` table. */
  readonly name: string;
  streamId(key: Key): string;
  /**
   * The stream the aggregate's events for `key` were appended to before it had a stream of
   * its own (an aggregate split finer, as a repository's refs were): folded before the
   * stream, never appended to again. Its events of other keys the decider's `evolve` ignores.
   */
  predecessor?(key: Key): string;
  /** A zod schema per event type: checked on append, and after upcasting on read. */
  readonly events: Schemas;
  readonly upcasters?: Upcasters<Schemas>;
  /** Event types kept for the feeds and the audit only, which no projector handles (a start-up check holds both ways). */
  readonly feedOnly?: readonly (keyof Schemas & string)[];
  readonly decider: Decider<Command, EventOf<Schemas>, State, Key>;
  /** Uniqueness claims an event takes or gives back, given the state before it. */
  claims?(event: EventOf<Schemas>, before: State): ClaimChanges;
  /** What a claim another stream holds answers; by default a 409 with the claim's message. */
  readonly claimRefusal?: ClaimRefusal;
  index?(event: EventOf<Schemas>): FeedIndex;
  /** The PostgreSQL sequence its new ids come from (`create`, `newId`): a new stream's, or a new item's where a stream holds many (a user's todos). */
  readonly idSequence?: string;
}

export interface Aggregate<Key, Command, Schemas extends EventSchemas, State> extends AggregateDefinition<Key, Command, Schemas, State> {
  readonly eventTypes: readonly (keyof Schemas & string)[];
}

/** Any aggregate, as the lists and the kernel hold them. */
export type AnyAggregate = Aggregate<any, any, any, any>;

export function defineAggregate<Key, Command, Schemas extends EventSchemas, State>(
  definition: AggregateDefinition<Key, Command, Schemas, State>,
): Aggregate<Key, Command, Schemas, State> {
  return { ...definition, eventTypes: eventTypesOf(definition.events) };
}

/** The events of an aggregate (or of a union of aggregates). */
export type EventsOf<A> = A extends { readonly events: infer S extends EventSchemas } ? EventOf<S> : never;
