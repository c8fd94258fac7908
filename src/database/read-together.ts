import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import { COMMIT, IN_TRANSACTION_BATCH } from './pg-client.js';

// database.ts's Db and OneRoundTrip, as this module's own types: database.ts imports this one.
type Db = Kysely<any>;
type OneRoundTrip = (statements: readonly CompiledQuery[]) => Promise<QueryResult<unknown>[]>;

/**
 * Several reads in one round trip. On this machine a round trip to PostgreSQL over loopback
 * costs Node about 0.2 ms of CPU in the socket write alone (the profile of a merge request
 * list: a quarter of its CPU in writev, one per statement), which is most of what a read of a
 * few rows costs. The reads a request makes side by side (a page and its count; a page's
 * namespaces, shares and the viewer's levels) go out as one batch of the extended protocol
 * (StatementBatch, src/database/pg-client.ts): one write, one implicit transaction,
 * so they also see one snapshot. Inside a transaction (a `trx`, not the handle's `db`), on
 * the embedded database, or for a single read, each is executed as it would be alone.
 */
const roundTrips = new WeakMap<Db, OneRoundTrip>();

/** Called by openDatabase for a PostgreSQL handle's `db`. */
export function readsTogetherOn(db: Db, oneRoundTrip: OneRoundTrip): void {
  roundTrips.set(db, oneRoundTrip);
}

type RowsOf<Q> = Q extends CompiledQuery<infer R> ? R[] : never[];
/** What readTogether answers for `queries`: each one's rows. */
export type RowsOfEach<Q extends readonly (CompiledQuery<any> | null)[]> = { -readonly [K in keyof Q]: RowsOf<Q[K]> };

/** The rows of each query, in order; a `null` in place of a query is a read the caller knows finds nothing, and is not sent. */
export async function readTogether<const Q extends readonly (CompiledQuery<any> | null)[]>(db: Db, queries: Q): Promise<RowsOfEach<Q>> {
  const sent = queries.filter((q): q is CompiledQuery<any> => q !== null);
  const oneRoundTrip = roundTrips.get(db);
  const results = oneRoundTrip && sent.length > 1 ? await oneRoundTrip(sent) : await Promise.all(sent.map((q) => db.executeQuery(q)));
  let next = 0;
  return queries.map((q) => (q === null ? [] : results[next++]!.rows)) as RowsOfEach<Q>;
}

/**
 * Statements sent as one batch inside a transaction (`trx`), in order, for one round trip
 * (attachTransactionBatches; on the embedded database, which has no wire, one after another):
 * each statement's result, or the first error, which carries `statementIndex`.
 *
 * `commit`: the batch ends with the transaction's COMMIT, so that its last statement and the
 * commit are one round trip. The transaction is then over — committed, or rolled back on an
 * error — and the caller must send nothing more in it: kysely's own COMMIT (or ROLLBACK) that
 * follows is answered without being sent.
 */
export async function batchInTransaction(trx: Db, statements: readonly CompiledQuery[], options: { commit?: boolean } = {}): Promise<QueryResult<unknown>[]> {
  const sent = options.commit ? [...statements, CompiledQuery.raw(COMMIT)] : statements;
  const { rows } = await trx.executeQuery(CompiledQuery.raw(IN_TRANSACTION_BATCH, [sent]));
  return (rows as QueryResult<unknown>[]).slice(0, statements.length);
}
