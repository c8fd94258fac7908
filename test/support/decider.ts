import { expect } from 'vitest';
import type { Decider, DomainEvent } from '../../src/domain/decider.js';
import { DomainError } from '../../src/domain/errors.js';

/**
 * Deciders as specifications (DESIGN.md, "Tests"): given events, when a command, then the
 * events it appends or the error it refuses with — no database.
 *
 *   const { on } = deciderSpec(membersDecider);
 *   on(G).given(added(G, 2, 30)).when(add(2, 40)).then(rejected('conflict', 'Member already exists'));
 *   on(G).given().when(add(2, 30)).then([added(G, 2, 30)]);
 */
export function deciderSpec<C, E extends DomainEvent, S, K = void>(decider: Decider<C, E, S, K>) {
  const on = (key: K) => ({
    given(...history: readonly E[]) {
      const state = history.reduce(decider.evolve, decider.initialState(key));
      return {
        /** The state the history folds to. */
        state,
        when(command: C) {
          const run = () => decider.decide(command, state);
          return {
            /** The events decided (`[]`: nothing to append), or the refusal (`rejected(…)`). */
            then(expected: readonly E[] | Rejection): void {
              if (expected instanceof Rejection) return expectRejection(run, expected);
              expect(run()).toEqual(expected);
            },
            /** The state after the decided events (for multi-step specifications). */
            state: () => run().reduce(decider.evolve, state),
          };
        },
      };
    },
  });
  return {
    /** The history of a stream whose key the decider does not need. */
    given: (...history: readonly E[]) => on(undefined as K).given(...history),
    /** The stream of `key` (a members source): `on(group).given(…).when(…)`. */
    on,
  };
}

/** What a refused command throws: the error code, and when given its message, fields and subject. */
export class Rejection {
  constructor(
    readonly code: DomainError['code'],
    readonly message?: string,
    readonly fields?: Record<string, readonly string[]>,
    readonly subject?: string,
  ) {}
}

/** A refusal with `code`; `message`, `fields` and `subject` are asserted when given. */
export const rejected = (code: DomainError['code'], message?: string, fields?: Record<string, readonly string[]>, subject?: string) =>
  new Rejection(code, message, fields, subject);

function expectRejection(run: () => unknown, expected: Rejection) {
  let error: unknown;
  let decided: unknown;
  try {
    decided = run();
  } catch (caught) {
    error = caught;
  }
  expect(error, `expected a DomainError '${expected.code}', got the events ${JSON.stringify(decided)}`).toBeInstanceOf(DomainError);
  const domainError = error as DomainError;
  expect(domainError.code).toBe(expected.code);
  if (expected.message !== undefined) expect(domainError.message).toBe(expected.message);
  if (expected.fields !== undefined) expect(domainError.fields).toEqual(expected.fields);
  if (expected.subject !== undefined) expect(domainError.subject).toBe(expected.subject);
}
