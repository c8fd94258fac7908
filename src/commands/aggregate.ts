import type { Db } from '../database/database.js';
import type { ClaimChanges, ClaimRefusal, Decider } from '../domain/decider.js';
import { eventTypesOf, type EventOf, type EventSchemas, type FeedIndex, type Upcasters } from '../domain/events.js';
import type { EventMetadata } from '../eventstore/types.js';
import { handleCommand } from './kernel/handler.js';
import type { CommandContext, CommandResult, CommandSpec } from './kernel/context.js';

/**
 * One aggregate, defined once: its stream, its events, its decider, the claims and feed
 * index of its events. What comes back runs its commands — the only way a command reaches
 * the log:
 *
 *   export const members = defineAggregate({ name: 'members', streamId: membersStreamId,
 *     events: memberEvents, decider: membersDecider, index: memberEventIndex });
 *
 *   await members.run(ctx, source, { type: 'AddMember', … }, metadata);
 *   await handleCommands(ctx, [groups.spec(id, create, metadata), members.spec(…)]); // atomically
 */
export interface AggregateDefinition<Key, Command, Schemas extends EventSchemas, State> {
  readonly name: string;
  readonly streamId: (key: Key) => string;
  /** A zod schema per event type: checked on append, and after upcasting on read. */
  readonly events: Schemas;
  readonly upcasters?: Upcasters<Schemas>;
  /** Event types kept for the feeds and the audit only, which no projector handles (a start-up check holds both ways). */
  readonly feedOnly?: readonly (keyof Schemas & string)[];
  readonly decider: Decider<Command, EventOf<Schemas>, State, Key>;
  /** Uniqueness claims an event takes or gives back, given the state before it. */
  readonly claims?: (event: EventOf<Schemas>, before: State) => ClaimChanges;
  /** What a claim another stream holds answers; by default a 409 with the claim's message. */
  readonly claimRefusal?: ClaimRefusal;
  readonly index?: (event: EventOf<Schemas>) => FeedIndex;
}

/**
 * The command, or what builds it inside the write transaction: facts from other aggregates'
 * rows that must not change before the commit (a parent group's visibility) are read there,
 * under a row lock that concurrent writers of those rows wait for.
 */
export type CommandInput<Command> = Command | ((trx: Db) => Promise<Command>);

export interface Aggregate<Key, Command, Schemas extends EventSchemas, State> extends AggregateDefinition<Key, Command, Schemas, State> {
  readonly eventTypes: readonly (keyof Schemas & string)[];
  /** Runs one command on the stream of `key`. */
  run(ctx: CommandContext, key: Key, command: CommandInput<Command>, metadata: EventMetadata): Promise<CommandResult<State>>;
  /** The same command as a spec, to commit with others atomically (`handleCommands`). */
  spec(key: Key, command: CommandInput<Command>, metadata: EventMetadata): CommandSpec<Command, EventOf<Schemas>, State>;
}

export function defineAggregate<Key, Command, Schemas extends EventSchemas, State>(
  definition: AggregateDefinition<Key, Command, Schemas, State>,
): Aggregate<Key, Command, Schemas, State> {
  const { decider, events, claims, claimRefusal, index } = definition;
  const spec = (key: Key, command: CommandInput<Command>, metadata: EventMetadata): CommandSpec<Command, EventOf<Schemas>, State> => ({
    streamId: definition.streamId(key),
    key,
    decider,
    events,
    command,
    metadata,
    ...(claims ? { claims } : {}),
    ...(claimRefusal ? { claimRefusal } : {}),
    ...(index ? { index } : {}),
  });
  return {
    ...definition,
    eventTypes: eventTypesOf(events),
    spec,
    run: (ctx, key, command, metadata) => handleCommand(ctx, spec(key, command, metadata)),
  };
}
