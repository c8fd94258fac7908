import type { CompiledQuery } from 'kysely';
import type { Db } from '../../database/database.js';

/**
 * A statement a command's transaction runs before anything else. It raises division_by_zero
 * (SQLSTATE 22012) when what the caller was allowed on no longer holds; the command then
 * fails with PreconditionFailed, having written nothing. `held` is called once it passed.
 */
export interface Precondition {
  readonly statement: CompiledQuery;
  held(): void;
}

export class PreconditionFailed extends Error {
  constructor() {
    super('the command precondition no longer holds');
  }
}

/** The precondition statement's failure as PreconditionFailed; any other error as it is. */
export const asPreconditionFailure = (error: unknown) => ((error as { code?: string } | undefined)?.code === '22012' ? new PreconditionFailed() : error);

/** Runs the precondition in the transaction: PreconditionFailed when it does not hold. */
export async function checkPrecondition(trx: Db, precondition: Precondition) {
  try {
    await trx.executeQuery(precondition.statement);
  } catch (error) {
    throw asPreconditionFailure(error);
  }
  precondition.held();
}
