import type { AnyAggregate, EventsOf } from '../../domain/aggregate.js';
import type { Db } from '../../database/database.js';
import { handleCommand, nextId } from './handler.js';
import type { CommandResult, CommandSpec, Writer } from './context.js';

/**
 * The command kernel's three verbs over an aggregate definition (src/domain/aggregate.ts),
 * each given the writer (context.ts) whose metadata the events carry:
 *
 *   await run(w, environments, id, { type: 'StopEnvironment' });
 *   const { id } = await create(w, environments, (id) => ({ type: 'CreateEnvironment', … }));
 *   await handleCommands(w, [spec(groups, id, create), spec(members, …)]); // atomically
 */

/**
 * The command, or what builds it inside the write transaction: facts from other aggregates'
 * rows that must not change before the commit (a parent group's visibility) are read there,
 * under a row lock that concurrent writers of those rows wait for.
 */
export type CommandInput<Command> = Command | ((trx: Db) => Promise<Command>);

/** What an aggregate's decider takes and keeps: the types `run` and `spec` check a command against. */
type CommandOf<A extends AnyAggregate> = Parameters<A['decider']['decide']>[0];
type StateOf<A extends AnyAggregate> = ReturnType<A['decider']['initialState']>;
type KeyOf<A extends AnyAggregate> = Parameters<A['decider']['initialState']>[0];

/** How a command's stream is known before it runs. */
export interface SpecOptions<Command = unknown> {
  /** The key was just allocated (`newId`): the stream is empty (CommandSpec.newStream). */
  readonly newStream?: boolean;
  /** A command built in the transaction, as built from rows read before it (CommandSpec.optimistic). */
  readonly optimistic?: CommandSpec<Command, never, unknown>['optimistic'] | undefined;
}

/** One command on the stream of `key`, to commit with others atomically (`handleCommands`). */
export function spec<A extends AnyAggregate>(
  aggregate: A,
  key: KeyOf<A>,
  command: NoInfer<CommandInput<CommandOf<A>>>,
  options: SpecOptions<NoInfer<CommandOf<A>>> = {},
): CommandSpec<CommandOf<A>, EventsOf<A>, StateOf<A>> {
  const { decider, events, claims, claimRefusal, index, predecessor } = aggregate;
  return {
    streamId: aggregate.streamId(key),
    key,
    decider: decider as CommandSpec<CommandOf<A>, EventsOf<A>, StateOf<A>>['decider'],
    events,
    command,
    ...(claims ? { claims } : {}),
    ...(claimRefusal ? { claimRefusal } : {}),
    ...(index ? { index } : {}),
    ...(options.newStream ? { newStream: true } : {}),
    ...(predecessor ? { predecessor: predecessor(key) } : {}),
    ...(options.optimistic ? { optimistic: options.optimistic } : {}),
  };
}

/** Runs one command on the stream of `key`: the only way a command reaches the log. */
export function run<A extends AnyAggregate>(
  w: Writer,
  aggregate: A,
  key: KeyOf<A>,
  command: NoInfer<CommandInput<CommandOf<A>>>,
  options: SpecOptions = {},
): Promise<CommandResult<StateOf<A>>> {
  return handleCommand(w, spec(aggregate, key, command, options));
}

/** A new id from the aggregate's sequence (`idSequence`), for a creation to name its stream by. */
export function newId(w: Writer, aggregate: AnyAggregate): Promise<number> {
  if (aggregate.idSequence === undefined) throw new Error(`${aggregate.name} has no idSequence: its streams are not keyed by an id of their own`);
  return w.ctx.ids ? w.ctx.ids.next(w.ctx.db, aggregate.idSequence) : nextId(w.ctx.db, aggregate.idSequence);
}

/** Creates a stream keyed by a new id (`newId`) and answers that id with the result. */
export async function create<A extends AnyAggregate>(
  w: Writer,
  aggregate: A,
  command: NoInfer<(id: number) => CommandInput<CommandOf<A>>>,
): Promise<CommandResult<StateOf<A>> & { readonly id: number }> {
  const id = await newId(w, aggregate);
  return { ...(await run(w, aggregate, id, command(id), { newStream: true })), id };
}
