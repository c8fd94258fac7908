/**
 * The decider shape every aggregate follows (after Emmett / Dudycz): pure functions, time
 * and ids passed in through the command. `decide` returns the events to append (possibly
 * none) or throws a DomainError. `initialState` is given the stream's key (the aggregate's
 * id: a user id, a members source), so a decision on a new stream knows whose it is.
 */
import type { DomainError } from './errors.js';

export interface DomainEvent<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
}

export interface Decider<Command, Event extends DomainEvent, State, Key = void> {
  initialState(key: Key): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): readonly Event[];
}

/** Cross-stream uniqueness claims an event takes or gives back (kind + case-folded key). */
export interface Claim {
  readonly kind: string;
  readonly key: string;
  /** The message of the 409 when somebody else holds the claim (unless the aggregate's `ClaimRefusal` says otherwise). */
  readonly conflictMessage: string;
}

/**
 * What an aggregate answers when another stream holds a claim it takes, when that is not a
 * 409 with the claim's message: GitLab validates most uniqueness on the model, so a path
 * taken is the field error `{"path":["has already been taken"]}`.
 */
export type ClaimRefusal = (claim: Claim) => DomainError;

export interface ClaimChanges {
  readonly acquire: readonly Claim[];
  readonly release: readonly Omit<Claim, 'conflictMessage'>[];
}

export const NO_CLAIMS: ClaimChanges = { acquire: [], release: [] };

/**
 * The default branch of a switch over a union of commands or events: a member nobody handles
 * is a type error here, and a start-up value that slips past the types fails loudly.
 */
export function unhandled(value: never): never {
  throw new Error(`unhandled ${JSON.stringify(value)}`);
}
