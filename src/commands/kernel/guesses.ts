import type { CompiledQuery } from 'kysely';
import type { Db } from '../../database/database.js';

/**
 * A guess a command built in its transaction made instead of reading (an iid: iids.ts), and
 * the statements that prove it under the locks it needs. They are sent at the head of the
 * command's append (appendAndProject, one-round-trip.ts) — in the same batch as the claims,
 * the INSERT, the projections and the COMMIT — so the locks are held for PostgreSQL's work
 * alone, not across a round trip to Node. A statement of the proof divides by zero (SQLSTATE
 * 22012) when the guess is wrong: the transaction rolls back, and the command is decided
 * again (WrongGuess, a concurrency conflict to the handler), reading this time.
 */
export interface Guess {
  readonly proof: readonly CompiledQuery[];
  /** The append failed, the guess proved wrong or not: what was guessed was not taken. */
  readonly abandoned: () => void;
}

const guesses = new WeakMap<Db, Guess>();

/** Sends `guess`'s proof ahead of the transaction's next append. */
export function proveWithAppend(trx: Db, guess: Guess): void {
  if (guesses.has(trx)) throw new Error('a transaction proves one guess at a time');
  guesses.set(trx, guess);
}

/** The guess the transaction's next append proves, taken from it. */
export function guessToProve(trx: Db): Guess | undefined {
  const guess = guesses.get(trx);
  guesses.delete(trx);
  return guess;
}

/** A guess's proof failed: the transaction has rolled back, and its command is decided again. */
export class WrongGuess extends Error {
  constructor() {
    super('a guess the command made proved wrong');
  }
}
