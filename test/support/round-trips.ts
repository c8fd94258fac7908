import type pg from 'pg';

/**
 * The statements a pool's connections are asked for while `fn` runs, a list per round trip
 * (a batch's statements together), on PostgreSQL; none on the embedded database, which has
 * no pool (`pool` undefined).
 */
export async function roundTrips(pool: pg.Pool | undefined, fn: () => Promise<unknown>): Promise<string[][]> {
  const trips: string[][] = [];
  if (!pool) {
    await fn();
    return trips;
  }
  const wrapped = new Map<{ query: (...args: unknown[]) => unknown }, (...args: unknown[]) => unknown>();
  const onAcquire = (client: { query: (...args: unknown[]) => unknown }) => {
    if (wrapped.has(client)) return;
    const query = client.query;
    wrapped.set(client, query);
    client.query = function (this: unknown, ...args: unknown[]) {
      const [config] = args;
      const statements = (config as { statements?: { sql: string }[] } | undefined)?.statements;
      trips.push(typeof config === 'string' ? [config] : statements ? statements.map((s) => s.sql) : [String((config as { text?: string }).text)]);
      return query.apply(client, args);
    };
  };
  pool.on('acquire', onAcquire as never);
  try {
    await fn();
  } finally {
    pool.off('acquire', onAcquire as never);
    for (const [client, query] of wrapped) client.query = query;
  }
  return trips;
}
