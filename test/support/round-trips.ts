import type { DatabaseHandle } from '../../src/database/database.js';
import { IN_TRANSACTION_BATCH } from '../../src/database/pg-client.js';

/**
 * The statements a database's connections are asked for while `fn` runs, a list per round trip
 * (a batch's statements together, those of a batch in a transaction too; a statement of the
 * pipeline alone), on PostgreSQL; none on the embedded database, which has no pool.
 */
export async function roundTrips(handle: DatabaseHandle, fn: () => Promise<unknown>): Promise<string[][]> {
  const trips: string[][] = [];
  const { pool, pipeline } = handle;
  if (!pool) {
    await fn();
    return trips;
  }
  const observed = pipeline && { query: pipeline.query, batch: pipeline.batch };
  if (pipeline && observed) {
    pipeline.query = (text, values) => {
      trips.push([text]);
      return observed.query.call(pipeline, text, values);
    };
    pipeline.batch = (statements) => {
      trips.push(statements.map((s) => s.sql));
      return observed.batch.call(pipeline, statements);
    };
  }
  const wrapped = new Map<{ query: (...args: unknown[]) => unknown }, (...args: unknown[]) => unknown>();
  const onAcquire = (client: { query: (...args: unknown[]) => unknown }) => {
    if (wrapped.has(client)) return;
    const query = client.query;
    wrapped.set(client, query);
    client.query = function (this: unknown, ...args: unknown[]) {
      const [config, values] = args;
      // A batch in the open transaction (IN_TRANSACTION_BATCH) names its statements in its values.
      const statements = config === IN_TRANSACTION_BATCH ? (values as [{ sql: string }[]])[0] : (config as { statements?: { sql: string }[] } | undefined)?.statements;
      trips.push(statements ? statements.map((s) => s.sql) : typeof config === 'string' ? [config] : [String((config as { text?: string }).text)]);
      return query.apply(client, args);
    };
  };
  pool.on('acquire', onAcquire as never);
  try {
    await fn();
  } finally {
    pool.off('acquire', onAcquire as never);
    if (pipeline && observed) Object.assign(pipeline, observed);
    for (const [client, query] of wrapped) client.query = query;
  }
  return trips;
}
