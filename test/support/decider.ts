import { expect } from 'vitest';
import type { Decider, DomainEvent } from '../../src/domain/decider.js';
import { DomainError, type DomainErrorDetail } from '../../src/domain/errors.js';

/**
 * Deciders as specifications (DESIGN.md, "Tests"): given events, when a command, then the
 * events it appends or the error it refuses with — no database.
 *
 *   const { on } = deciderSpec(membersDecider);
 *   on(G).given(added(G, 2, 30)).when(add(2, 40)).then(rejected('conflict', { text: 'Member already exists' }));
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

/** What a refused command throws: the error code and, when given, the parts of its detail. */
export class Rejection {
  constructor(
    readonly code: DomainError['code'],
    readonly detail: DomainErrorDetail = {},
  ) {}
}

/**
 * A refusal with `code`; each key of `detail` that is present is asserted, `undefined`
 * included: `rejected('forbidden', { subject: undefined })` is a forbidden without a reason.
 */
export const rejected = (code: DomainError['code'], detail?: DomainErrorDetail) => new Rejection(code, detail);

function expectRejection(run: () => unknown, expected: Rejection) {
  let error: unknown;
  let decided: unknown;
  try {
    decided = run();
  } catch (caught) {
    error = caught;
  }
  expect(error, `expected a DomainError '${expected.code}', got the events ${JSON.stringify(decided)}`).toBeInstanceOf(DomainError);
  expect(detailOf(error as DomainError, expected.detail)).toEqual({ code: expected.code, ...expected.detail });
}

/** The error's code and the parts of its detail that `asked` names. */
export function detailOf(error: DomainError, asked: DomainErrorDetail = {}): Record<string, unknown> {
  const detail: Record<string, unknown> = { code: error.code };
  for (const key of Object.keys(asked) as (keyof DomainErrorDetail)[]) detail[key] = error[key];
  return detail;
}
