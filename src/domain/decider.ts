/**
 * The decider shape every aggregate follows (after Emmett / Dudycz): pure functions, time
 * and ids passed in through the command. `decide` returns the events to append (possibly
 * none) or throws a DomainError.
 */
export interface DomainEvent<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
}

export interface Decider<Command, Event extends DomainEvent, State> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): readonly Event[];
}

/** Cross-stream uniqueness claims an event takes or gives back (kind + case-folded key). */
export interface Claim {
  readonly kind: string;
  readonly key: string;
  /** The message of the 409 when somebody else holds the claim. */
  readonly conflictMessage: string;
}

export interface ClaimChanges {
  readonly acquire: readonly Claim[];
  readonly release: readonly Omit<Claim, 'conflictMessage'>[];
}

export const NO_CLAIMS: ClaimChanges = { acquire: [], release: [] };
